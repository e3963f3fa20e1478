#!/bin/sh
# help2man runs this as the program: `--help` prints the program's own --help followed by the
# --help of each subcommand (their headings renamed so that help2man keeps them apart from the
# top-level options); anything else (--version) goes to the program unchanged.
#   with_subcommands.sh PROGRAM "SUB1 SUB2 ..." ARGS...
# (A subcommand's description lines are indented so that help2man keeps them in its section.)
prog=$1 subs=$2
shift 2
if [ "$1" != "--help" ]; then
  exec "$prog" "$@"
fi
"$prog" --help || exit 1
name=$(basename "$prog")
for sub in $subs; do
  echo
  echo "Command $name $sub:"
  "$prog" "$sub" --help | sed -e "s|^Usage: [^ ]*$name |Usage: $name |" \
    -e "s|^Options:|Options of $name $sub:|" -e "s|^Positionals:|Arguments of $name $sub:|" |
    sed -e '/^Usage:/!s/^[^ ].*[^:]$/  &/'
done
