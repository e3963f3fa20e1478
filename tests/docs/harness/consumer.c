/* A program built against the installed libnnclient: it prints the library's version and asks
   the daemon ($NND_RUNTIME_DIR/nnd.sock) what it serves. */
#include <nnclient.h>
#include <stdio.h>

int main(void) {
  nnclient_status st;
  nnclient_t* c = nnclient_open(NULL, &st);
  if (!c) {
    fprintf(stderr, "%s: %s\n", nnclient_status_name(st), nnclient_last_error(NULL));
    return 1;
  }
  nnclient_model_info_t ball;
  st = nnclient_model_info(c, "ball", &ball);
  printf("libnnclient %s: model ball %s\n", nnclient_version(), nnclient_status_name(st));
  nnclient_close(c);
  return st != NNCLIENT_OK;
}
