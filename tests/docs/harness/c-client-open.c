/* The program around a documented fragment that opens a client handle `c` into `st`. */
#include <nnclient.h>
#include <stdio.h>

int main(void) {
  nnclient_status st;
@FRAGMENT@
  if (!c) {
    fprintf(stderr, "%s: %s\n", nnclient_status_name(st), nnclient_last_error(NULL));
    return 1;
  }
  nnclient_close(c);
  return 0;
}
