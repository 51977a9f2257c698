// Checking that a chart is well-formed SVG with a real XML parser (expat):
// the tests look at its structure, not at pixels.
#pragma once

#include <expat.h>

#include <map>
#include <string>

namespace axo::testing {

struct SvgCheck {
  bool well_formed = false;
  std::string error;                   // expat's message and line when not well-formed
  std::string root;                    // the root element's name
  std::map<std::string, int> elements; // how many of each element
  std::string text;                    // all character data, concatenated
};

inline SvgCheck check_svg(const std::string& svg) {
  SvgCheck check;
  XML_Parser parser = XML_ParserCreate(nullptr);
  XML_SetUserData(parser, &check);
  XML_SetElementHandler(
      parser,
      [](void* data, const XML_Char* name, const XML_Char**) {
        auto* c = static_cast<SvgCheck*>(data);
        if (c->root.empty()) c->root = name;
        ++c->elements[name];
      },
      [](void*, const XML_Char*) {});
  XML_SetCharacterDataHandler(parser, [](void* data, const XML_Char* s, int length) {
    static_cast<SvgCheck*>(data)->text.append(s, size_t(length));
  });
  check.well_formed = XML_Parse(parser, svg.data(), int(svg.size()), 1) == XML_STATUS_OK;
  if (!check.well_formed) {
    check.error = std::string(XML_ErrorString(XML_GetErrorCode(parser))) + " at line " +
                  std::to_string(XML_GetCurrentLineNumber(parser));
  }
  XML_ParserFree(parser);
  return check;
}

}  // namespace axo::testing
