#include "plan/results_store.hpp"

#include <sqlite3.h>
#include <unistd.h>

#include <fmt/format.h>

#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include "core/error.hpp"
#include "plan/plan_spec.hpp"

namespace gf::plan {
namespace {

[[noreturn]] void fail(const std::string& path, const std::string& problem, const std::string& valid = {}) {
  throw InputError({path, 0, 0}, "--db", problem, valid);
}

// A prepared statement that finalizes itself.
class Statement {
public:
  Statement(sqlite3* db, const char* sql, const std::string& path) {
    if (sqlite3_prepare_v2(db, sql, -1, &s_, nullptr) != SQLITE_OK) fail(path, sqlite3_errmsg(db));
  }
  ~Statement() { sqlite3_finalize(s_); }
  Statement(const Statement&) = delete;
  Statement& operator=(const Statement&) = delete;
  sqlite3_stmt* get() const { return s_; }
  void bind(int i, const std::string& v) const {
    sqlite3_bind_text(s_, i, v.data(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
  }

private:
  sqlite3_stmt* s_ = nullptr;
};

std::string column_text(sqlite3_stmt* s, int i) {
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(s, i));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(s, i))) : std::string();
}

// The layout of the tables; a file of another layout is refused, never half-read. Format 2 added
// the per-row checksum.
constexpr const char* kFormat = "gpufabric-plan-results 2";

// `path` as an SQLite URI ("file:" and the percent-encoded absolute path), for opening it with
// parameters.
std::string file_uri(const std::string& path) {
  std::error_code ec;
  const std::string abs = std::filesystem::absolute(path, ec).string();
  std::string uri = "file:";
  for (const char c : ec ? path : abs) {
    const auto u = static_cast<unsigned char>(c);
    if (std::isalnum(u) || c == '/' || c == '-' || c == '_' || c == '.' || c == '~') {
      uri += c;
    } else {
      uri += fmt::format("%{:02X}", u);
    }
  }
  return uri;
}

// Opens `name` read-only and reads its schema once, so that a file SQLite cannot read fails
// here; returns SQLite's result code (the connection is kept in `db` either way).
int open_and_probe(const std::string& name, int flags, sqlite3*& db) {
  int rc = sqlite3_open_v2(name.c_str(), &db, flags, nullptr);
  if (rc == SQLITE_OK) sqlite3_busy_timeout(db, 10000);  // a plan writing it now holds a lock briefly
  if (rc == SQLITE_OK) rc = sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr);
  return rc == SQLITE_OK ? rc : sqlite3_extended_errcode(db);
}

}  // namespace

ResultsStore::ResultsStore(const std::string& path) : path_(path) {
  if (sqlite3_open_v2(path.c_str(), &db_, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, nullptr) != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "cannot open";
    sqlite3_close(db_);
    db_ = nullptr;
    fail(path, why, "a writable path for the results database");
  }
  sqlite3_busy_timeout(db_, 10000);
  // A file or directory without write permission: said as such (--show reads it without writing),
  // not blamed on the file's contents.
  if (sqlite3_db_readonly(db_, "main") == 1) {
    sqlite3_close(db_);
    db_ = nullptr;
    fail(path, "is read-only here, and a plan run stores its results in it",
         "a writable --db file; `gpufabric plan --db FILE --show` reads a read-only one");
  }
  // Another file than a database (a plan given by mistake, a text file) fails here, cleanly.
  // Two connections switching a new file to WAL at once (a planner creating it, a reader
  // polling it) can meet in a lock upgrade where SQLite returns "database is locked" without
  // calling the busy handler, to avoid a deadlock: retry that, for as long as the busy timeout.
  char* err = nullptr;
  int rc = SQLITE_OK;
  for (int tries = 0; tries < 1000; ++tries) {
    sqlite3_free(err);
    err = nullptr;
    rc = sqlite3_exec(db_, "PRAGMA journal_mode=WAL", nullptr, nullptr, &err);
    if (rc != SQLITE_BUSY && rc != SQLITE_LOCKED) break;
    sqlite3_sleep(10);
  }
  if (rc != SQLITE_OK) {
    const std::string why = err ? err : "not a database";
    sqlite3_free(err);
    const int code = sqlite3_extended_errcode(db_) & 0xff;
    sqlite3_close(db_);
    db_ = nullptr;
    if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN || code == SQLITE_PERM || code == SQLITE_IOERR)
      fail(path, "cannot be written (" + why + ")", "a writable --db file in a writable directory");
    fail(path, "not a gpufabric results database (" + why + ")", "a file written by `gpufabric plan --db`");
  }
  // NORMAL in WAL mode: a committed transaction survives the process being killed (only a power
  // loss may drop the last ones); the database is never left corrupt.
  exec("PRAGMA synchronous=NORMAL");
}

ResultsStore::ResultsStore(const std::string& path, const std::string& plan_hash, const std::string& model_version,
                           const std::string& plan_name, const std::string& plan_text)
    : ResultsStore(path) {
  exec("CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)");
  exec(
      "CREATE TABLE IF NOT EXISTS results (key TEXT PRIMARY KEY, plan_hash TEXT NOT NULL, result TEXT NOT NULL, "
      "checksum TEXT NOT NULL)");
  const std::string stored = meta("plan_hash");
  if (!stored.empty()) check_format();
  if (stored.empty()) {
    exec("BEGIN IMMEDIATE");
    const Statement s(db_, "INSERT OR REPLACE INTO meta (key, value) VALUES (?1, ?2)", path_);
    for (const auto& [k, v] : {std::pair<std::string, std::string>{"plan_hash", plan_hash},
                               {"model_version", model_version},
                               {"plan_name", plan_name},
                               {"plan_text", plan_text},
                               {"format", kFormat}}) {
      sqlite3_reset(s.get());
      s.bind(1, k);
      s.bind(2, v);
      if (sqlite3_step(s.get()) != SQLITE_DONE) fail(path_, sqlite3_errmsg(db_));
    }
    exec("COMMIT");
  } else if (stored != plan_hash) {
    fail(path_,
         fmt::format("written by another plan ('{}', hash {}; this plan's hash is {})", meta("plan_name"), stored,
                     plan_hash),
         "a new --db file for this plan, or the plan that wrote this one");
  } else if (meta("model_version") != model_version) {
    fail(path_,
         fmt::format("written by model version {}; this is {} (its results would differ)", meta("model_version"),
                     model_version),
         "a new --db file, or the gpufabric that wrote it");
  }
  hash_ = plan_hash;
  version_ = model_version;
  text_ = plan_text;
}

ResultsStore::ResultsStore(const std::string& path, ReadOnly) : path_(path) {
  // What the file system says first: a missing or unreadable file is not "not a database".
  if (access(path.c_str(), R_OK) != 0) {
    const int err = errno;
    fail(path, std::string("cannot be read: ") + std::strerror(err),
         "a readable file written by `gpufabric plan --db`");
  }
  int rc = open_and_probe(path, SQLITE_OPEN_READONLY, db_);
  const int code = rc & 0xff;
  if (code == SQLITE_READONLY || code == SQLITE_CANTOPEN) {
    // A WAL database in a directory where SQLite may not create its shared-memory index (a
    // read-only directory): with no write-ahead log pending, everything is in the file itself,
    // and SQLite reads it as immutable (no index, no locks).
    std::error_code ec;
    const auto wal = std::filesystem::file_size(path + "-wal", ec);
    if (!ec && wal > 0) {
      sqlite3_close(db_);
      db_ = nullptr;
      fail(path,
           fmt::format("cannot be read here: its write-ahead log '{}-wal' holds {} bytes of results not yet in the "
                       "file, and SQLite cannot open it without writing beside it (a read-only directory)",
                       path, wal),
           "the database in a writable directory (copy it with its -wal file), or let its plan run finish");
    }
    sqlite3_close(db_);
    db_ = nullptr;
    rc = open_and_probe(file_uri(path) + "?immutable=1", SQLITE_OPEN_READONLY | SQLITE_OPEN_URI, db_);
  }
  if (rc != SQLITE_OK) {
    const std::string why = db_ ? sqlite3_errmsg(db_) : "cannot open";
    sqlite3_close(db_);
    db_ = nullptr;
    if ((rc & 0xff) == SQLITE_NOTADB)
      fail(path, "not a gpufabric results database (" + why + ")", "a file written by `gpufabric plan --db`");
    fail(path, "cannot be read (" + why + ")", "a readable file written by `gpufabric plan --db`");
  }
}

std::unique_ptr<ResultsStore> ResultsStore::open_existing(const std::string& path) {
  std::unique_ptr<ResultsStore> s(new ResultsStore(path, ReadOnly{}));
  Statement check(s->db_, "SELECT count(*) FROM sqlite_master WHERE type='table' AND name IN ('meta','results')", path);
  if (sqlite3_step(check.get()) != SQLITE_ROW || sqlite3_column_int(check.get(), 0) != 2) {
    fail(path, "not a gpufabric results database (no results table)", "a file written by `gpufabric plan --db`");
  }
  s->hash_ = s->meta("plan_hash");
  s->version_ = s->meta("model_version");
  s->text_ = s->meta("plan_text");
  if (s->hash_.empty()) fail(path, "holds no plan", "a file written by `gpufabric plan --db`");
  s->check_format();
  return s;
}

void ResultsStore::check_format() const {
  const std::string format = meta("format");
  if (format != kFormat) {
    fail(path_,
         fmt::format("written in another layout ('{}'; this gpufabric reads '{}', with a checksum per row)",
                     format.empty() ? "none" : format, kFormat),
         "a new --db file (this plan's results are evaluated again)");
  }
}

std::string ResultsStore::row_checksum(const std::string& key, const std::string& plan_hash,
                                       const std::string& model_version, const std::string& json) {
  std::string all = key;
  for (const std::string* part : {&plan_hash, &model_version, &json}) {
    all += '\0';
    all += *part;
  }
  return fnv1a_hex(all);
}

ResultsStore::~ResultsStore() { sqlite3_close(db_); }

void ResultsStore::exec(const char* sql) const {
  char* err = nullptr;
  if (sqlite3_exec(db_, sql, nullptr, nullptr, &err) != SQLITE_OK) {
    const std::string why = err ? err : "error";
    sqlite3_free(err);
    fail(path_, why);
  }
}

std::string ResultsStore::meta(const std::string& key) const {
  const Statement s(db_, "SELECT value FROM meta WHERE key = ?1", path_);
  s.bind(1, key);
  return sqlite3_step(s.get()) == SQLITE_ROW ? column_text(s.get(), 0) : std::string();
}

bool ResultsStore::has(const std::string& key) const {
  const Statement s(db_, "SELECT 1 FROM results WHERE key = ?1 AND plan_hash = ?2", path_);
  s.bind(1, key);
  s.bind(2, hash_);
  return sqlite3_step(s.get()) == SQLITE_ROW;
}

std::map<std::string, std::string> ResultsStore::all() const {
  std::map<std::string, std::string> out;
  rejected_ = 0;
  const Statement s(db_, "SELECT key, result, checksum FROM results WHERE plan_hash = ?1", path_);
  s.bind(1, hash_);
  int rc = SQLITE_ROW;
  while ((rc = sqlite3_step(s.get())) == SQLITE_ROW) {
    std::string key = column_text(s.get(), 0), json = column_text(s.get(), 1);
    if (column_text(s.get(), 2) != row_checksum(key, hash_, version_, json)) {
      ++rejected_;
      continue;
    }
    out.emplace(std::move(key), std::move(json));
  }
  if (rc != SQLITE_DONE) fail(path_, std::string("reading the results failed: ") + sqlite3_errmsg(db_));
  return out;
}

void ResultsStore::put(const std::string& key, const std::string& json) {
  const Statement s(db_, "INSERT OR REPLACE INTO results (key, plan_hash, result, checksum) VALUES (?1, ?2, ?3, ?4)",
                    path_);
  s.bind(1, key);
  s.bind(2, hash_);
  s.bind(3, json);
  s.bind(4, row_checksum(key, hash_, version_, json));
  if (sqlite3_step(s.get()) != SQLITE_DONE) fail(path_, sqlite3_errmsg(db_));
}

std::size_t ResultsStore::size() const {
  const Statement s(db_, "SELECT count(*) FROM results WHERE plan_hash = ?1", path_);
  s.bind(1, hash_);
  return sqlite3_step(s.get()) == SQLITE_ROW ? static_cast<std::size_t>(sqlite3_column_int64(s.get(), 0)) : 0;
}

}  // namespace gf::plan

namespace gf::plan {

std::string ResultsStore::integrity() const {
  const Statement s(db_, "PRAGMA integrity_check", path_);
  return sqlite3_step(s.get()) == SQLITE_ROW ? column_text(s.get(), 0) : std::string("no answer");
}

}  // namespace gf::plan
