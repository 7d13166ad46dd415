# Turns dashboard.html into a C++ source defining demo::dashboard_html. Inputs: INPUT, OUTPUT.
file(READ "${INPUT}" content)
file(WRITE "${OUTPUT}.tmp" "// Generated from dashboard.html by embed.cmake: do not edit.\nnamespace demo { extern const char* const dashboard_html; const char* const dashboard_html = R\"idlewheel_html(${content})idlewheel_html\"; }\n")
file(COPY_FILE "${OUTPUT}.tmp" "${OUTPUT}" ONLY_IF_DIFFERENT)
