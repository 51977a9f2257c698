// The `axo` command line: registers the subcommands and maps failures to exit
// codes (0 success, 1 runtime failure, 2 usage error or bad input).
#include <CLI/CLI.hpp>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "model/error.h"
#include "tools/commands.h"
#include "tools/error_line.h"

int main(int argc, char** argv) {
  CLI::App app{"axo: plan, run and check hybrid-parallel transformer training"};
  app.require_subcommand(1);
  axo::tools::add_plan_command(app);
  axo::tools::add_models_command(app);
  axo::tools::add_machines_command(app);
  axo::tools::add_validate_command(app);
  axo::tools::add_calibrate_command(app);
  axo::tools::add_train_command(app);
  axo::tools::add_data_command(app);
  axo::tools::add_report_command(app);
  if (const std::string taken = axo::tools::option_name_taken_as_value(app, argc, argv); !taken.empty()) {
    axo::tools::print_error_line("error", taken);
    return 2;
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::RequiredError& e) {
    // A word that names no subcommand ("axo plna") reads to CLI11 as none given: name it.
    std::string known;
    bool named = false;
    for (const CLI::App* command : app.get_subcommands(nullptr)) {
      known += (known.empty() ? "" : ", ") + command->get_name();
      named = named || (argc > 1 && command->get_name() == argv[1]);
    }
    if (argc > 1 && argv[1][0] != '-' && !named) {
      axo::tools::print_error_line("error", std::string("unknown command '") + argv[1] + "' (commands: " + known + ")");
      return 2;
    }
    app.exit(e);
    return 2;
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 2;
  } catch (const axo::InputError& e) {
    axo::tools::print_error_line("error", e.what());
    return 2;
  } catch (const std::exception& e) {
    axo::tools::print_error_line("failed", e.what());
    return 1;
  }
  // What was printed must be written: a full disk or a closed stdout (axo plan --emit megatron >
  // args.sh) is a failure, not an empty file and success.
  errno = 0;
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) {
    // An earlier buffered write's failure leaves no errno for this flush: no reason then.
    axo::tools::print_error_line("failed", std::string("writing the standard output failed") +
                                               (errno != 0 ? std::string(": ") + std::strerror(errno) : ""));
    return 1;
  }
  return 0;
}
