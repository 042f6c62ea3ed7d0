#pragma once
// CSV as our outputs write it (RFC 4180), readable by pandas.read_csv(path, comment='#'): the
// warnings and notes go first, one comment line each, and no data field can start a comment.
#include <string>

#include "core/messages.hpp"

namespace gf {

// One field: quoted when it holds a comma, a quote, a line break or a '#' (which a reader
// skipping comments would take, unquoted, for the start of one and drop the rest of the row).
std::string csv_field(const std::string& text);

// "# warning: ...\n" for each warning, then "# note: ...\n" for each note, each on one line
// (line breaks inside a message become spaces), to put before the header row.
std::string csv_comment_lines(const Messages& m);

}  // namespace gf
