# Installing psgrad like a Debian tool: `cmake --install build` (prefix /usr/local), or the Debian
# package `cpack -G DEB` builds in the build folder (prefix /usr): the command line on PATH, the Python
# package for Debian's /usr/bin/python3, the configs and examples under share/psgrad.

# Installing installs what was built (scripts/setup.sh builds it) and builds nothing: a package made
# while the tests run must not relink the binaries they use.
set(CMAKE_SKIP_INSTALL_ALL_DEPENDENCY ON)

install(TARGETS psgrad RUNTIME DESTINATION bin)
install(DIRECTORY configs/ DESTINATION share/psgrad/configs)
install(DIRECTORY examples/ DESTINATION share/psgrad/examples)
install(FILES README.md DESTINATION share/doc/psgrad)

if(PSGRAD_PYTHON)
  # Debian's python3 reads /usr/lib/python3/dist-packages and /usr/local/lib/python3.X/dist-packages: the
  # folder follows the prefix of the install (the package's /usr, or --prefix), known only then.
  set(psgrad_python_files ${PROJECT_BINARY_DIR}/python/psgrad/__init__.py ${PROJECT_BINARY_DIR}/python/psgrad/roles.py
                          ${PROJECT_BINARY_DIR}/python/psgrad/role_results.py ${PROJECT_BINARY_DIR}/python/psgrad/columns.py
                          ${PROJECT_BINARY_DIR}/python/psgrad/thinc_interop.py
                          ${PROJECT_BINARY_DIR}/python/psgrad/_core.pyi ${PROJECT_BINARY_DIR}/python/psgrad/py.typed)
  install(CODE "
    if(CMAKE_INSTALL_PREFIX STREQUAL \"/usr\")
      set(psgrad_python_dir \"\${CMAKE_INSTALL_PREFIX}/lib/python3/dist-packages/psgrad\")
    else()
      set(psgrad_python_dir \"\${CMAKE_INSTALL_PREFIX}/lib/python3.${Python3_VERSION_MINOR}/dist-packages/psgrad\")
    endif()
    file(INSTALL DESTINATION \"\${psgrad_python_dir}\" TYPE FILE
         FILES ${psgrad_python_files} \"$<TARGET_FILE:psgrad_python>\")
  ")
endif()

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME psgrad)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "data-parallel neural-network training with a parameter server")
set(CPACK_PACKAGE_CONTACT "psgrad developers <psgrad@localhost>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # psgrad_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
# dpkg-shlibdeps names the Debian packages of the libraries the binaries link (libcaf, libzip, ...).
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
if(PSGRAD_PYTHON)
  # The module is built for this interpreter's ABI.
  set(CPACK_DEBIAN_PACKAGE_DEPENDS
      "python3 (>= 3.${Python3_VERSION_MINOR}), python3 (<< 3.${Python3_VERSION_MINOR}.999), python3-numpy")
endif()
include(CPack)
