/* The program around a documented fragment that uses an open client handle `c`. */
#include <nnclient.h>
#include <stdio.h>

int main(void) {
  nnclient_status st;
  nnclient_t* c = nnclient_open(NULL, &st);
  if (!c) {
    fprintf(stderr, "%s: %s\n", nnclient_status_name(st), nnclient_last_error(NULL));
    return 1;
  }
@FRAGMENT@
  nnclient_close(c);
  return 0;
}
