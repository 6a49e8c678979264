// fmt.Sprintf over template values: core's go::DoPrintf interprets the
// format string; this supplies the operands (fmt/print.go's []any).
#include <cstddef>
#include <cstdint>
#include <utility>

#include "core/go/fmt.h"
#include "rules/template/text/fmt_print.h"
#include "rules/template/text/fmt_printer.h"

namespace vigil::rules::tmpl {

using gofmt::Printer;

namespace {

// The operands of one GoSprintf call, printed by its Printer.
class ValueOperands : public go::PrintfOperands {
 public:
  ValueOperands(const std::vector<Value>& a, Printer* p) : a_(a), p_(p) {}

  size_t size() const override { return a_.size(); }

  // intFromArg: Go's int kinds only (templates have int and, rarely, uint).
  bool AsInt(size_t i, int* num) const override {
    const Value& v = a_[i];
    if (v.kind == Kind::kInt && v.i >= INT32_MIN && v.i <= INT32_MAX) {
      *num = static_cast<int>(v.i);
      return true;
    }
    if (v.kind == Kind::kUint) {
      *num = static_cast<int>(v.u);
      return true;
    }
    return false;
  }

  void Print(size_t i, int verb) override { p_->PrintArg(a_[i], verb); }

  void PrintExtra(size_t i) override {
    if (!a_[i].valid()) {
      p_->buf += "<nil>";
    } else {
      p_->buf += TypeName(a_[i]);
      p_->buf += '=';
      p_->PrintArg(a_[i], 'v');
    }
  }

 private:
  const std::vector<Value>& a_;
  Printer* p_;
};

}  // namespace

std::string GoSprintf(std::string_view format, const std::vector<Value>& a) {
  Printer p;
  ValueOperands operands(a, &p);
  go::DoPrintf(format, &operands, &p);
  return std::move(p.buf);
}

}  // namespace vigil::rules::tmpl
