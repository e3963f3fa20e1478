/* asmjit_stderr.c — `stderr` for the AsmJit linked into libnnd.so.
 *
 * Debian's libasmjit-dev ships AsmJit only as a static archive, compiled position-independent but
 * for executables (-fPIE): its debug-output function reads libc's `stderr` with a PC-relative load,
 * which a shared object cannot resolve at run time (ld: "relocation R_X86_64_PC32 against symbol
 * `stderr' can not be used when making a shared object"). That is its only such reference. The
 * library is linked with -Wl,--wrap=stderr: every reference to `stderr` in libnnd.so then goes to
 * the hidden variable below, which is local (PC-relative loads are fine), and which a constructor
 * sets to libc's stream before anything in the library runs. */
#include <stdio.h>

extern FILE* __real_stderr; /* libc's `stderr` (the linker's name for it under --wrap) */
__attribute__((visibility("hidden"))) FILE* __wrap_stderr;

__attribute__((constructor(101))) static void nnd_take_stderr(void) { __wrap_stderr = __real_stderr; }
