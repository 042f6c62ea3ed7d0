#pragma once
// A CSV file as a header and rows, each row with the line it started on, read with libcsv
// (RFC 4180: quoted fields, embedded commas and quotes). Blank lines are skipped; a row with
// another number of fields than the header is kept with its count so the caller can say so.
#include <string>
#include <vector>

namespace gf::sched {

struct CsvRow {
  int line = 0;
  std::vector<std::string> fields;
};

struct CsvTable {
  std::string file;
  std::vector<std::string> header;
  std::vector<CsvRow> rows;
  // The header's index of `name`, or -1.
  [[nodiscard]] int column(const std::string& name) const;
};

// How the fields of a line are told apart: RFC 4180 by default; Slurm's `sacct --parsable2`
// separates them with '|' and quotes nothing (a '"' in a job name is part of the name).
struct CsvDialect {
  char delimiter = ',';
  bool quoting = true;
};

// Throws InputError (file, line) on malformed quoting or an empty file.
CsvTable parse_csv(const std::string& text, const std::string& file, CsvDialect dialect = {});
CsvTable read_csv(const std::string& path);

// One field as RFC 4180 writes it: quoted (quotes doubled) when it holds a comma, a quote or a
// line break, as is otherwise.
std::string csv_field(const std::string& text);

}  // namespace gf::sched
