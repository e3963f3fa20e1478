/* An application built against a previous nnclient.h (tests/client/abi/include-<version>/, a
 * verbatim copy of that release's header) and linked with the current libnnclient.so.1: it must
 * still run (client/ABI.md). Uses every struct of the old header against the fake daemon.
 *   old_app SOCKET */
#include <nnclient.h>
#include <stdio.h>
#include <string.h>

#define CHECK(cond)                                             \
  do {                                                          \
    if (!(cond)) {                                              \
      printf("FAIL line %d: %s (%s)\n", __LINE__, #cond, err);  \
      return 1;                                                 \
    }                                                           \
  } while (0)

int main(int argc, char** argv) {
  const char* err = "";
  if (argc != 2) return 2;
  printf("built with nnclient.h %d.%d.%d, running libnnclient %s\n", NNCLIENT_VERSION_MAJOR,
         NNCLIENT_VERSION_MINOR, NNCLIENT_VERSION_PATCH, nnclient_version());
  char major[16];
  snprintf(major, sizeof major, "%d.", NNCLIENT_VERSION_MAJOR);
  CHECK(strncmp(nnclient_version(), major, strlen(major)) == 0);

  nnclient_status st = NNCLIENT_OK;
  nnclient_t* c = nnclient_open(argv[1], &st);
  err = nnclient_last_error(NULL);
  CHECK(c != NULL);
  nnclient_model_info_t info;
  memset(&info, 0, sizeof info);
  st = nnclient_model_info(c, "double", &info);
  err = nnclient_last_error(c);
  CHECK(st == NNCLIENT_OK);
  CHECK(info.num_inputs == 1 && info.inputs[0].sample_bytes == 16 && info.max_batch >= 2);

  float x[8] = {1, 2, 3, 4, 5, 6, 7, 8}, y[8] = {0};
  const void* in[1] = {x};
  void* out[1] = {y};
  st = nnclient_infer(c, &info, in, 2, out, 2000000);
  err = nnclient_last_error(c);
  CHECK(st == NNCLIENT_OK);
  for (int i = 0; i < 8; ++i) CHECK(y[i] == 2 * x[i]);

  nnclient_request_t* r = NULL;
  st = nnclient_request_begin(c, &info, 1, &r);
  CHECK(st == NNCLIENT_OK);
  memcpy(nnclient_request_input(r, 0), x, 16);
  nnclient_request_options opt;
  memset(&opt, 0, sizeof opt);
  CHECK(nnclient_submit(c, r, &opt) == NNCLIENT_OK);
  CHECK(nnclient_wait(c, r, 2000000) == NNCLIENT_OK);
  CHECK(((const float*)nnclient_request_output(r, 0))[3] == 8);
  nnclient_request_release(c, r);

  nnclient_model_stats_t stats;
  memset(&stats, 0, sizeof stats);
  CHECK(nnclient_stats(c, 0, &stats) == NNCLIENT_OK && strcmp(stats.name, "double") == 0);
  nnclient_model_info_t listed;
  CHECK(nnclient_list_models(c, 1, &listed) == NNCLIENT_OK && strcmp(listed.name, "pair") == 0);
  CHECK(nnclient_model_info(c, "nosuch", &listed) == NNCLIENT_E_UNKNOWN_MODEL);
  nnclient_close(c);
  printf("old application OK\n");
  return 0;
}
