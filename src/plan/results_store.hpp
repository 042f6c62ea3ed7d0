#pragma once
// The planner's results store: one SQLite database per plan (Debian's libsqlite3). It holds the
// plan's hash and text, the model version that evaluated it, and every evaluated candidate as a
// JSON record under its unit key. Each result is committed on its own (WAL journal), so a run
// killed at any moment, `kill -9` included, loses no completed result and leaves the database
// consistent; re-running resumes with what is missing.
//
// Each row carries a checksum over its key, the plan's hash, the model version and the JSON, checked
// on every read: a row edited after it was written (by hand, by a tool, by a bad disk) is not
// counted as the model's answer but reported and evaluated again. FNV-1a catches edits, not an
// adversary who recomputes it; the file is the user's own, not a trust boundary.
#include <map>
#include <memory>
#include <string>
#include <vector>

struct sqlite3;

namespace gf::plan {

class ResultsStore {
public:
  // Opens or creates `path`. A database written for another plan, or by another model version,
  // is an InputError naming the file (results are never mixed). `plan_text` is stored so that
  // `--show` needs no plan file.
  ResultsStore(const std::string& path, const std::string& plan_hash, const std::string& model_version,
               const std::string& plan_name, const std::string& plan_text);
  // Opens an existing database read-only (for --show: a file or directory without write
  // permission is fine); InputError saying what is wrong when it cannot be read or is not ours.
  static std::unique_ptr<ResultsStore> open_existing(const std::string& path);
  ~ResultsStore();
  ResultsStore(const ResultsStore&) = delete;
  ResultsStore& operator=(const ResultsStore&) = delete;

  [[nodiscard]] bool has(const std::string& key) const;
  // Every stored result by key whose checksum holds; rows that fail it are left out and counted
  // (rejected()), so that a rerun evaluates them again and replaces them.
  [[nodiscard]] std::map<std::string, std::string> all() const;
  // Rows the last all() left out because their checksum did not hold.
  [[nodiscard]] std::size_t rejected() const { return rejected_; }
  void put(const std::string& key, const std::string& json);
  [[nodiscard]] const std::string& plan_hash() const { return hash_; }
  [[nodiscard]] const std::string& plan_text() const { return text_; }
  [[nodiscard]] const std::string& model_version() const { return version_; }
  [[nodiscard]] std::size_t size() const;
  // SQLite's own check of the file ("ok" when the database is consistent).
  [[nodiscard]] std::string integrity() const;

  // The checksum stored beside a row.
  [[nodiscard]] static std::string row_checksum(const std::string& key, const std::string& plan_hash,
                                                const std::string& model_version, const std::string& json);

private:
  struct ReadOnly {};
  explicit ResultsStore(const std::string& path);
  ResultsStore(const std::string& path, ReadOnly);
  void check_format() const;
  void exec(const char* sql) const;
  [[nodiscard]] std::string meta(const std::string& key) const;
  std::string path_;
  sqlite3* db_ = nullptr;
  std::string hash_, version_, text_;
  mutable std::size_t rejected_ = 0;
};

}  // namespace gf::plan
