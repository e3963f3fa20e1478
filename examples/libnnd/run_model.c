/* Runs a model in this process with libnnd: one sample of zeros, prints its first output value. */
#include <nnd.h>
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char** argv) {
  nnd_model_t* m;
  if (argc != 2 || nnd_model_open(argv[1], NULL, &m) != NND_OK) {
    fprintf(stderr, "usage: run_model MODEL_FILE\n%s\n", nnd_last_error());
    return 1;
  }
  nnd_tensor_info_t in = {.struct_size = sizeof in}, out = {.struct_size = sizeof out};
  nnd_model_input(m, 0, &in);
  nnd_model_output(m, 0, &out);
  void *x = calloc(1, in.sample_bytes), *y = calloc(1, out.sample_bytes);
  nnd_status st = nnd_model_run(m, 1, (const void* const*)&x, &y);
  printf("%s: %s on %s, %s[0] = %g\n", argv[1], nnd_status_name(st), nnd_model_engine(m), out.name, *(float*)y);
  nnd_model_close(m); free(x); free(y);
  return st != NND_OK;
}
