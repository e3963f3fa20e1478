# Install-time step (install(CODE) includes this): writes the default config and the systemd unit
# for the actual install prefix. The config's model paths point at <prefix>/share/nnd/models and
# clients of group `nnd` may connect; the unit's ExecStart points at <prefix>/bin/nnd.
# Inputs: NND_SOURCE_DIR, and CMAKE_INSTALL_PREFIX / DESTDIR as the install sets them.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  set(etc "/etc")
else()
  set(etc "${CMAKE_INSTALL_PREFIX}/etc")
endif()

file(READ "${NND_SOURCE_DIR}/config/nnd.yaml" cfg)
string(REPLACE "../examples/models/" "${CMAKE_INSTALL_PREFIX}/share/nnd/models/" cfg "${cfg}")
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
string(REPLACE "/usr/bin/nnd" "${CMAKE_INSTALL_PREFIX}/bin/nnd" unit "${unit}")
string(REPLACE "/etc/nnd/nnd.yaml" "${etc}/nnd/nnd.yaml" unit "${unit}")
string(REPLACE "file:///usr/share/doc/nnd/" "file://${CMAKE_INSTALL_PREFIX}/share/doc/nnd/" unit "${unit}")
set(unit_out "$ENV{DESTDIR}${CMAKE_INSTALL_PREFIX}/lib/systemd/system/nnd.service")
message(STATUS "Installing: ${unit_out}")
file(WRITE "${unit_out}" "${unit}")
