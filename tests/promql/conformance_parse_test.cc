// Parses every `eval` expression of the upstream PromQL test scripts in
// /work/shared/conformance/promql (when present) and requires that at least
// 99% of the ones using neither native-histogram nor experimental features
// parse. Evals expecting failure are skipped: some fail at parse time.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "promql/ast.h"
#include "promql/internal/lexer.h"
#include "promql/parser.h"

namespace vigil::promql {
namespace {

namespace fs = std::filesystem;
using internal::Lexer;
using internal::Tok;
using internal::Token;

struct EvalExpr {
  std::string file;
  int line;
  std::string expr;
};

std::string Trim(const std::string& s) {
  size_t b = s.find_first_not_of(" \t\r");
  if (b == std::string::npos) return "";
  size_t e = s.find_last_not_of(" \t\r");
  return s.substr(b, e - b + 1);
}

// "eval instant at <t> <expr>" / "eval range from <a> to <b> step <s> <expr>".
bool ExtractExpr(const std::string& line, std::string* expr) {
  std::istringstream in(line);
  std::string cmd, kind, w;
  in >> cmd >> kind;
  int skip = kind == "instant" ? 2 : kind == "range" ? 6 : -1;
  if (skip < 0) return false;
  for (int i = 0; i < skip; ++i) in >> w;
  std::getline(in, *expr);
  *expr = Trim(*expr);
  return true;
}

std::vector<EvalExpr> LoadEvals(const fs::path& dir) {
  std::vector<EvalExpr> out;
  std::vector<fs::path> files;
  for (const auto& f : fs::directory_iterator(dir)) {
    if (f.path().extension() == ".test") files.push_back(f.path());
  }
  std::sort(files.begin(), files.end());
  for (const auto& path : files) {
    std::ifstream in(path);
    std::vector<std::string> lines;
    for (std::string l; std::getline(in, l);) lines.push_back(Trim(l));
    for (size_t i = 0; i < lines.size(); ++i) {
      const std::string& l = lines[i];
      if (l.rfind("eval", 0) != 0) continue;
      bool expect_fail = l.rfind("eval_fail", 0) == 0;
      for (size_t j = i + 1;
           j < lines.size() && !lines[j].empty() && lines[j][0] != '#'; ++j) {
        if (lines[j].rfind("expect fail", 0) == 0) expect_fail = true;
      }
      std::string expr;
      if (expect_fail || !ExtractExpr(l, &expr)) continue;
      out.push_back({path.filename().string(), static_cast<int>(i + 1), expr});
    }
  }
  return out;
}

// True if the expression uses a feature Prometheus keeps behind a flag, or a
// native-histogram-only function/operator (decided on tokens, not a parse).
bool UsesSpecialFeatures(const std::string& expr) {
  Lexer lex(expr);
  std::vector<Token> toks;
  for (Token t = lex.Next(); t.type != Tok::kEOF && t.type != Tok::kError;
       t = lex.Next()) {
    toks.push_back(t);
  }
  for (size_t i = 0; i < toks.size(); ++i) {
    const Token& t = toks[i];
    bool call = i + 1 < toks.size() && toks[i + 1].type == Tok::kLeftParen;
    switch (t.type) {
      case Tok::kLimitk:
      case Tok::kLimitRatio:
      case Tok::kAnchored:
      case Tok::kSmoothed:
      case Tok::kFill:
      case Tok::kFillLeft:
      case Tok::kFillRight:
      case Tok::kStep:
      case Tok::kRange:
      case Tok::kMaxOf:
      case Tok::kMinOf:
      case Tok::kTrimUpper:
      case Tok::kTrimLower:
        return true;
      case Tok::kStart:
      case Tok::kEnd:
        if (call && (i == 0 || toks[i - 1].type != Tok::kAt)) return true;
        break;
      case Tok::kIdentifier:
        if (call) {
          const Function* f = LookupFunction(t.val);
          if (f && (f->experimental || f->native_histogram)) return true;
        }
        break;
      case Tok::kLeftBracket:
        // Anything but `[d]`, `[d:]`, `[d:d]` is duration arithmetic.
        for (size_t j = i + 1;
             j < toks.size() && toks[j].type != Tok::kRightBracket; ++j) {
          Tok k = toks[j].type;
          if (k != Tok::kDuration && k != Tok::kNumber && k != Tok::kColon)
            return true;
        }
        break;
      case Tok::kOffset:
        if (i + 1 < toks.size() && toks[i + 1].type == Tok::kLeftParen)
          return true;
        break;
      default:
        break;
    }
  }
  return false;
}

TEST_CASE("upstream conformance eval expressions parse",
          "[parser][conformance][shared]") {
  fs::path dir = fs::path(VIGIL_SHARED_DIR) / "conformance" / "promql";
  if (!fs::exists(dir)) {
    WARN("no conformance folder at " << dir.string() << "; skipped");
    return;
  }
  auto evals = LoadEvals(dir);
  REQUIRE(evals.size() > 1000);
  int total = 0, total_ok = 0, core = 0, core_ok = 0;
  std::vector<std::string> core_failures;
  for (const auto& e : evals) {
    auto r = ParseExpr(e.expr);
    bool special = UsesSpecialFeatures(e.expr);
    ++total;
    total_ok += r.ok();
    if (!special) {
      ++core;
      core_ok += r.ok();
      if (!r.ok()) {
        core_failures.push_back(e.file + ":" + std::to_string(e.line) + ": " +
                                e.expr + " -> " +
                                std::string(r.status().message()));
      }
    }
    if (r.ok()) {
      // The printed form must parse back to the same text.
      auto again = ParseExpr(Format(**r));
      INFO(e.file << ":" << e.line << ": " << e.expr);
      REQUIRE(again.ok());
      CHECK(Format(**again) == Format(**r));
    }
  }
  std::cout << "conformance evals: " << total_ok << "/" << total
            << " parse; without experimental/native-histogram features: "
            << core_ok << "/" << core << "\n";
  for (const auto& f : core_failures) std::cout << "  " << f << "\n";
  CHECK(core_ok * 100 >= core * 99);
}

}  // namespace
}  // namespace vigil::promql
