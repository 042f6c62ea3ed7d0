#pragma once
// Text from users' files and flags, made safe to print: a terminal must never receive their raw
// control bytes (ESC starts an escape sequence that can rewrite the screen or the title) and
// output that must be UTF-8 must never receive bytes that are not.
#include <string>
#include <string_view>

namespace gf {

// `text` with every byte that is not printable UTF-8 written as an escape: C0 controls, DEL and
// the C1 controls (U+0080..U+009F) as \xNN or \u00NN, and each byte of an invalid UTF-8 sequence
// as \xNN. Tab and newline are kept when `keep_layout` is true (multi-line messages), and escaped
// (\t, \n) when it is false (one table cell, one name). Printable text is returned unchanged.
std::string printable(std::string_view text, bool keep_layout = false);

}  // namespace gf
