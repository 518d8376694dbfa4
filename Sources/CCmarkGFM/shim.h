// GitHub's CommonMark implementation (cmark-gfm) and its table, strikethrough and autolink
// extensions, from Debian's libcmark-gfm-dev and libcmark-gfm-extensions-dev.
#include <cmark-gfm.h>
#include <cmark-gfm-core-extensions.h>
