// The message of the InputError a callable throws, for the tests that check what a mistake says.
#pragma once

#include <functional>
#include <string>

#include "model/error.h"

namespace axo::testing {

// The InputError `f` throws, or "(no InputError)" when it throws none: an expectation on the
// message then fails showing that (another exception propagates and fails the test).
inline std::string input_error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const InputError& e) {
    return e.what();
  }
  return "(no InputError)";
}

}  // namespace axo::testing
