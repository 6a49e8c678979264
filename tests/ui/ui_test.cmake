# The web UI in a real browser: tests/ui/run.sh starts vigil-sim and vigil
# and drives Debian's chromium with playwright-core (from the UI's
# node_modules in the build directory; no browser download). Skipped, with
# the reason, when node, chromium, playwright-core or the UI is missing.
find_program(VIGIL_CHROMIUM NAMES chromium chromium-browser)
if(NOT VIGIL_CHROMIUM)
  message(STATUS "UI test: no chromium (apt-get install chromium): it will be skipped")
endif()
add_test(NAME "ui: every page in chromium (tests/ui/ui_test.mjs)"
  COMMAND bash ${PROJECT_SOURCE_DIR}/tests/ui/run.sh
    --vigil=$<TARGET_FILE:vigil> --sim=$<TARGET_FILE:vigil-sim>
    --node=${VIGIL_NODE} --modules=${VIGIL_UI_NODE_MODULES}
    --chromium=${VIGIL_CHROMIUM} --ui-built=${VIGIL_UI_BUILT}
    --out=${CMAKE_BINARY_DIR}/ui-test)
set_tests_properties("ui: every page in chromium (tests/ui/ui_test.mjs)"
  PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77 LABELS ui)
