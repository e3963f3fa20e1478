# Install-time step (install(CODE) includes this): writes the default config and the systemd unit
# for the actual install prefix (cpack: /usr). In the config the model paths point at
# <prefix>/share/nnd/models, clients of group `nnd` may connect, and the header comment names the
# files where they are after the install; the unit's paths point at <prefix>/sbin/nnd,
# <prefix>/bin/nnctl and the config.
# Inputs: NND_SOURCE_DIR, NND_SBINDIR and NND_BINDIR (relative to the prefix), and
# CMAKE_INSTALL_PREFIX / DESTDIR as the install sets them.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(etc "/etc")
else()
  set(etc "${CMAKE_INSTALL_PREFIX}/etc")
endif()
set(prefix "${CMAKE_INSTALL_PREFIX}")

file(READ "${NND_SOURCE_DIR}/config/nnd.yaml" cfg)
# The source copy's header talks about the repository; replace it (everything before `daemon:`).
string(FIND "${cfg}" "\ndaemon:" body_at)
if(body_at LESS 0)
  message(FATAL_ERROR "config/nnd.yaml: no top-level 'daemon:' key")
endif()
math(EXPR body_at "${body_at} + 1")
string(SUBSTRING "${cfg}" ${body_at} -1 body)
set(cfg "# nnd config: serves the example models in ${prefix}/share/nnd/models.
# Every key is documented in nnd.yaml(5) (`man nnd.yaml`) and ${prefix}/share/doc/nnd/SCHEMA.md.
# Relative model paths resolve against this file's folder (${etc}/nnd).
# After a change: `nnd --check ${etc}/nnd/nnd.yaml`, then `systemctl reload nnd` (or
# `nnctl reload`); a failed reload keeps the running models. Logs: `journalctl -u nnd`.
${body}")
string(REPLACE "../examples/models/" "${prefix}/share/nnd/models/" cfg "${cfg}")
string(REPLACE "  socket_mode: 0660"
               "  group: nnd               # members of group nnd may connect (the package creates it)\n  socket_mode: 0660"
               cfg "${cfg}")
set(cfg_out "$ENV{DESTDIR}${etc}/nnd/nnd.yaml")
if(EXISTS "${cfg_out}" AND NOT DEFINED ENV{NND_OVERWRITE_CONFIG} AND "$ENV{DESTDIR}" STREQUAL "")
  message(STATUS "Keeping existing config: ${cfg_out}")
else()
  message(STATUS "Installing: ${cfg_out}")
  file(WRITE "${cfg_out}" "${cfg}")
endif()

file(READ "${NND_SOURCE_DIR}/systemd/nnd.service" unit)
string(REPLACE "/usr/sbin/nnd" "${prefix}/${NND_SBINDIR}/nnd" unit "${unit}")
string(REPLACE "/usr/bin/nnctl" "${prefix}/${NND_BINDIR}/nnctl" unit "${unit}")
string(REPLACE "/etc/nnd/nnd.yaml" "${etc}/nnd/nnd.yaml" unit "${unit}")
string(REPLACE "file:///usr/share/doc/nnd/" "file://${prefix}/share/doc/nnd/" unit "${unit}")
set(unit_out "$ENV{DESTDIR}${prefix}/lib/systemd/system/nnd.service")
message(STATUS "Installing: ${unit_out}")
file(WRITE "${unit_out}" "${unit}")
