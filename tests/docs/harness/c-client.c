/* The program around a documented C client fragment that runs "ball": the buffers it names
   (patches, scores, batch) and the check that its last call succeeded (st). */
#include <stdint.h>
#include <stdio.h>

static float patches[4 * 32 * 32 * 3];
static float scores[4 * 64];

int main(void) {
  const uint32_t batch = 4;
@FRAGMENT@
  return st != NNCLIENT_OK;
}
