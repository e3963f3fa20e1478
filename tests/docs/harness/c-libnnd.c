/* The program around a documented libnnd fragment: the buffers it names (batch, inputs,
   outputs: room for any of the robot networks' samples) and the check that it opened `bop`. */
#include <nnd.h>
#include <stdint.h>
#include <stdio.h>

static float input0[1 << 20];
static float output0[1 << 20], output1[1 << 20], output2[1 << 20], output3[1 << 20];

int main(void) {
  const uint32_t batch = 1;
  const void* inputs[] = {input0};
  void* outputs[] = {output0, output1, output2, output3};
@FRAGMENT@
  if (!bop) {
    fprintf(stderr, "%s\n", nnd_last_error());
    return 1;
  }
  printf("ran on %s\n", nnd_model_engine(bop));
  nnd_model_close(bop);
  return 0;
}
