#include "sched/csv_table.hpp"

#include <csv.h>

#include <algorithm>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "core/error.hpp"
#include "core/yaml_fields.hpp"

namespace gf::sched {

int CsvTable::column(const std::string& name) const {
  const auto it = std::find(header.begin(), header.end(), name);
  return it == header.end() ? -1 : static_cast<int>(it - header.begin());
}

namespace {

struct Builder {
  const std::string* text = nullptr;
  std::vector<CsvRow> rows;
  CsvRow current;
  int line = 1;             // the line the parser has reached
  std::size_t scanned = 0;  // bytes of `text` counted into `line`
  bool row_open = false;
};

std::string trim(const std::string& s) {
  const auto b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return {};
  return s.substr(b, s.find_last_not_of(" \t\r") - b + 1);
}

}  // namespace

CsvTable parse_csv(const std::string& text, const std::string& file, CsvDialect dialect) {
  require_utf8(text, file);  // every field may reach JSON output
  if (const auto nul = text.find('\0'); !dialect.quoting && nul != std::string::npos) {
    // Without quoting, libcsv's quote character is NUL: one in the text would open a quoted field.
    const int line =
        1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(nul), '\n'));
    throw InputError({file, line, 0}, "row", "a NUL byte in the text", "printable text, one record per line");
  }
  csv_parser p;
  if (csv_init(&p, CSV_STRICT | CSV_STRICT_FINI | CSV_EMPTY_IS_NULL) != 0)
    throw std::runtime_error("libcsv: csv_init failed");
  csv_set_delim(&p, static_cast<unsigned char>(dialect.delimiter));
  if (!dialect.quoting) csv_set_quote(&p, 0);
  Builder b;
  b.text = &text;
  // Rows are delivered whole; feeding the text line by line lets each row carry the line it
  // started on (a quoted field may span lines: the row keeps its first).
  auto field = [](void* s, std::size_t len, void* data) {
    auto* bb = static_cast<Builder*>(data);
    if (!bb->row_open) {
      bb->current = CsvRow{bb->line, {}};
      bb->row_open = true;
    }
    bb->current.fields.push_back(s ? trim(std::string(static_cast<const char*>(s), len)) : std::string());
  };
  auto row = [](int, void* data) {
    auto* bb = static_cast<Builder*>(data);
    if (bb->row_open) bb->rows.push_back(std::move(bb->current));
    bb->row_open = false;
  };
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    end = end == std::string::npos ? text.size() : end + 1;
    // A row that spans lines keeps the line it started on; fields are reported as they end.
    if (csv_parse(&p, text.data() + pos, end - pos, field, row, &b) != end - pos) {
      const std::string why = csv_strerror(csv_error(&p));
      csv_free(&p);
      throw InputError({file, b.line, 0}, "row", "malformed CSV: " + why,
                       dialect.quoting ? std::string("comma-separated fields; a field with commas or quotes in double "
                                                     "quotes, its quotes doubled")
                                       : fmt::format("fields separated by '{}'", dialect.delimiter));
    }
    ++b.line;
    pos = end;
  }
  if (csv_fini(&p, field, row, &b) != 0) {
    const std::string why = csv_strerror(csv_error(&p));
    csv_free(&p);
    throw InputError({file, b.line, 0}, "row", "malformed CSV at the end of the file: " + why,
                     "every quoted field closed");
  }
  csv_free(&p);
  CsvTable t;
  t.file = file;
  // Rows whose fields are all empty are blank lines.
  std::vector<CsvRow> rows;
  for (auto& r : b.rows)
    if (std::any_of(r.fields.begin(), r.fields.end(), [](const std::string& f) { return !f.empty(); }))
      rows.push_back(std::move(r));
  if (rows.empty())
    throw InputError({file, 1, 0}, "header", "the file is empty", "a header line, then one row per line");
  t.header = rows.front().fields;
  t.rows.assign(std::make_move_iterator(rows.begin() + 1), std::make_move_iterator(rows.end()));
  return t;
}

std::string csv_field(const std::string& text) {
  if (text.find_first_of(",\"\r\n") == std::string::npos) return text;
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"') out += '"';
    out += c;
  }
  return out + "\"";
}

CsvTable read_csv(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw InputError({path, 0, 0}, "file", "cannot open the file", "a readable CSV file");
  std::stringstream ss;
  ss << in.rdbuf();
  return parse_csv(ss.str(), path);
}

}  // namespace gf::sched
