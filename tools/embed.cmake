# Embeds a text file as a C string: cmake -DIN=file -DOUT=file.c -P embed.cmake
file(READ ${IN} _txt HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_txt}")
file(WRITE ${OUT} "/* generated from ${IN} */\n#include <stddef.h>\nconst char fe_prelude_src[] = {${_bytes} 0x00};\nconst size_t fe_prelude_len = sizeof(fe_prelude_src) - 1;\n")
