// Drawing with PLplot's svg device into a string (see plplot_svg.h).
#include "plot/plplot_svg.h"

#include <plplot.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>
#include <stdexcept>

namespace axo {

namespace {

std::mutex plplot_mutex;

// Colour-blind-friendly series colours (Okabe & Ito 2008), then fillers.
void set_palette() {
  plscmap0n(kPlotFirstSeries + kPlotSeriesCount);
  plscol0(kPlotBackground, 255, 255, 255);
  plscol0(kPlotInk, 0, 0, 0);
  plscol0(kPlotGuide, 150, 150, 150);
  const int series[kPlotSeriesCount][3] = {{0, 114, 178},  {230, 159, 0},  {0, 158, 115},
                                           {213, 94, 0},   {86, 180, 233}, {204, 121, 167},
                                           {240, 228, 66}, {90, 90, 90}};
  for (int i = 0; i < kPlotSeriesCount; ++i) {
    plscol0(kPlotFirstSeries + i, series[i][0], series[i][1], series[i][2]);
  }
}

// A new empty file in the temporary folder; its name.
std::string make_temporary_file() {
  std::string name = (std::filesystem::temp_directory_path() / "axo_plot_XXXXXX.svg").string();
  const int fd = ::mkstemps(name.data(), 4);
  if (fd < 0) throw std::runtime_error("cannot create a temporary file for the plot: " + name);
  ::close(fd);
  return name;
}

}  // namespace

std::string render_svg(int width, int height, const std::function<void()>& draw) {
  const std::lock_guard<std::mutex> lock(plplot_mutex);
  const std::string temporary = make_temporary_file();
  PLINT previous = 0, stream = -1;
  plgstrm(&previous);
  plmkstrm(&stream);
  if (stream < 0) {
    std::remove(temporary.c_str());
    throw std::runtime_error("PLplot: no free plot stream");
  }
  plsdev("svg");
  plsfnam(temporary.c_str());
  plspage(0, 0, width, height, 0, 0);
  set_palette();
  plinit();
  try {
    draw();
  } catch (...) {
    plend1();
    plsstrm(previous);
    std::remove(temporary.c_str());
    throw;
  }
  plend1();  // finishes and closes the file
  plsstrm(previous);
  std::ifstream in(temporary, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  std::remove(temporary.c_str());
  const std::string svg = text.str();
  if (svg.find("<svg") == std::string::npos || svg.find("</svg>") == std::string::npos) {
    throw std::runtime_error("PLplot's svg device wrote no complete SVG");
  }
  return svg;
}

}  // namespace axo
