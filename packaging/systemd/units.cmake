# The systemd units (ctprof-record.service, ctprof-serve.service) and the
# sysusers.d entry of their user. Generated at install time, so the paths
# in them follow `cmake --install --prefix` as well as
# CMAKE_INSTALL_PREFIX; installed under <prefix>/lib/systemd/system and
# <prefix>/lib/sysusers.d (where Debian's systemd reads them for /usr and
# /usr/local is for a local install, then linked or copied to /etc/systemd).
set(CTP_UNIT_SRC ${CMAKE_CURRENT_LIST_DIR})
# The capabilities the built plugins declare together, as systemd spells a
# set (sorted): CAP_BPF and CAP_PERFMON only where bpf-task and taskstats'
# exit program are built (tests/units.sh derives the same set).
if(TARGET ctp_bpftask)
  set(CTP_UNIT_CAPS "CAP_BPF CAP_DAC_READ_SEARCH CAP_NET_ADMIN CAP_PERFMON CAP_SYS_PTRACE")
else()
  set(CTP_UNIT_CAPS "CAP_DAC_READ_SEARCH CAP_NET_ADMIN CAP_SYS_PTRACE")
endif()
install(CODE "
  set(prefix \"\${CMAKE_INSTALL_PREFIX}\")
  set(CTP_UNIT_CAPS \"${CTP_UNIT_CAPS}\")
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_BINDIR}\")
    set(CTP_UNIT_BINDIR \"${CMAKE_INSTALL_BINDIR}\")
  else()
    set(CTP_UNIT_BINDIR \"\${prefix}/${CMAKE_INSTALL_BINDIR}\")
  endif()
  if(IS_ABSOLUTE \"${CMAKE_INSTALL_SYSCONFDIR}\")
    set(CTP_UNIT_CONFDIR \"${CMAKE_INSTALL_SYSCONFDIR}/ctprof\")
  else()
    set(CTP_UNIT_CONFDIR \"\${prefix}/${CMAKE_INSTALL_SYSCONFDIR}/ctprof\")
  endif()
  set(unitdir \"\$ENV{DESTDIR}\${prefix}/lib/systemd/system\")
  foreach(unit ctprof-record.service ctprof-serve.service)
    message(STATUS \"Installing: \${unitdir}/\${unit}\")
    configure_file(\"${CTP_UNIT_SRC}/\${unit}.in\" \"\${unitdir}/\${unit}\" @ONLY)
    list(APPEND CMAKE_INSTALL_MANIFEST_FILES \"\${unitdir}/\${unit}\")
  endforeach()
")
install(FILES ${CTP_UNIT_SRC}/ctprof.sysusers DESTINATION lib/sysusers.d
        RENAME ctprof.conf)
