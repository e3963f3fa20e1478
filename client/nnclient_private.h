/* nnclient_private.h — internals of libnnclient exposed to its own unit tests only (not installed).
 * The symbols are hidden in the shared library; tests link the static one. */
#ifndef NNCLIENT_PRIVATE_H
#define NNCLIENT_PRIVATE_H

#include <stddef.h>

#include "nnclient.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Resolves `endpoint` (NULL = $NND_ENDPOINT or "nnd") to the socket path as nnclient_open does.
 * Writes the path (NUL-terminated) to out[n]. Returns NNCLIENT_E_INVALID_ARGUMENT for an empty
 * endpoint or a path that does not fit a Unix socket address (or `out`). */
nnclient_status nnclient_resolve_endpoint(const char* endpoint, char* out, size_t n);

/* Spin budget before sleeping, in microseconds, as chosen at open (0 on a single CPU). */
unsigned nnclient_spin_us(const nnclient_t* c);

#ifdef __cplusplus
}
#endif

#endif /* NNCLIENT_PRIVATE_H */
