/* libtx.c - the one source file of libtx.so (tools/CMakeLists.txt): CMake
 * needs a source for a shared library; everything in it comes from the
 * driver floor's archive, linked whole, and the floors below it. */
#include "tx.h"
