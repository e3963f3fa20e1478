/* Uses the installed C API: argv[1] is an endpoint nobody listens on. */
#include <nnclient.h>
#include <stdio.h>

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(argv[1], &st);
  printf("%s: %s (%s)\n", nnclient_status_name(st), nnclient_strerror(st), nnclient_last_error(NULL));
  nnclient_close(c);
  return c == NULL && st == NNCLIENT_E_DAEMON_NOT_RUNNING ? 0 : 1;
}
