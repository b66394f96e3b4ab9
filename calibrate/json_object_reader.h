// A JSON object read field by field with strict checks (calibrate/measurements_read.cpp): every error
// is an InputError naming the file and the JSON path, and every key not asked for is an error.
#pragma once

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "errors.h"
#include "yaml_reader.h"

namespace tp {

// "an object", "an integer", ... for messages ("expected a number, got a string").
inline const char* json_type_name(const nlohmann::json& j) {
  switch (j.type()) {
    case nlohmann::json::value_t::null: return "null";
    case nlohmann::json::value_t::object: return "an object";
    case nlohmann::json::value_t::array: return "an array";
    case nlohmann::json::value_t::string: return "a string";
    case nlohmann::json::value_t::boolean: return "a boolean";
    case nlohmann::json::value_t::number_integer:
    case nlohmann::json::value_t::number_unsigned: return "an integer";
    case nlohmann::json::value_t::number_float: return "a number";
    default: return "an unknown value";
  }
}

// A JSON object read field by field; every key not asked for is an error (with a "did you mean").
class JsonObjectReader {
 public:
  JsonObjectReader(const nlohmann::json& j, std::string path, const std::string& file) : j_(j), path_(std::move(path)), file_(file) {
    if (!j_.is_object()) fail_here(std::string("expected an object, got ") + json_type_name(j_));
  }

  std::string field(const std::string& key) const { return path_.empty() ? key : path_ + "." + key; }

  [[noreturn]] void fail(const std::string& key, const std::string& message) const {
    throw InputError({file_, 0, 0}, field(key), message);
  }
  [[noreturn]] void fail_here(const std::string& message) const { throw InputError({file_, 0, 0}, path_, message); }

  bool has(const std::string& key) {
    known_.push_back(key);
    return j_.contains(key);
  }

  const nlohmann::json& get(const std::string& key, bool required) {
    static const nlohmann::json kNull;
    if (!has(key)) {
      if (required) fail(key, "missing (required)");
      return kNull;
    }
    return j_.at(key);
  }

  double number(const std::string& key, double def, bool required = false, double min = -1e300,
                double max = std::numeric_limits<double>::max()) {
    const nlohmann::json& v = get(key, required);
    if (v.is_null() && !j_.contains(key)) return def;
    if (!v.is_number()) fail(key, std::string("expected a number, got ") + json_type_name(v));
    const double x = v.get<double>();
    if (!(x >= min)) fail(key, "must be at least " + shown(min) + ", got " + shown(x));
    if (!(x <= max)) fail(key, "must be at most " + shown(max) + ", got " + shown(x));
    return x;
  }

  std::int64_t integer(const std::string& key, std::int64_t def, bool required = false, std::int64_t min = 0,
                       std::int64_t max = INT64_MAX) {
    const nlohmann::json& v = get(key, required);
    if (v.is_null() && !j_.contains(key)) return def;
    if (!v.is_number_integer()) fail(key, std::string("expected an integer, got ") + json_type_name(v));
    if (v.is_number_unsigned() && v.get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) {
      fail(key, "is out of range: at most " + std::to_string(INT64_MAX));  // read as int64 it would wrap negative
    }
    const std::int64_t x = v.get<std::int64_t>();
    if (x < min) fail(key, "must be at least " + std::to_string(min) + ", got " + std::to_string(x));
    if (x > max) fail(key, "must be at most " + std::to_string(max) + ", got " + std::to_string(x));
    return x;
  }

  bool boolean(const std::string& key, bool def, bool required = false) {
    const nlohmann::json& v = get(key, required);
    if (v.is_null() && !j_.contains(key)) return def;
    if (!v.is_boolean()) fail(key, std::string("expected true or false, got ") + json_type_name(v));
    return v.get<bool>();
  }

  std::string string(const std::string& key, const std::string& def, bool required = false) {
    const nlohmann::json& v = get(key, required);
    if (v.is_null() && !j_.contains(key)) return def;
    if (!v.is_string()) fail(key, std::string("expected a string, got ") + json_type_name(v));
    return v.get<std::string>();
  }

  std::vector<std::string> strings(const std::string& key) {
    const nlohmann::json& v = get(key, false);
    std::vector<std::string> out;
    if (v.is_null() && !j_.contains(key)) return out;
    if (!v.is_array()) fail(key, std::string("expected an array of strings, got ") + json_type_name(v));
    for (size_t i = 0; i < v.size(); ++i) {
      if (!v[i].is_string()) {
        throw InputError({file_, 0, 0}, field(key) + "[" + std::to_string(i) + "]",
                         std::string("expected a string, got ") + json_type_name(v[i]));
      }
      out.push_back(v[i].get<std::string>());
    }
    return out;
  }

  void finish() const {
    for (auto it = j_.begin(); it != j_.end(); ++it) {
      if (std::find(known_.begin(), known_.end(), it.key()) != known_.end()) continue;
      const std::string hint = closest_key(it.key(), known_);
      fail(it.key(), "unknown key" + (hint.empty() ? std::string() : "; did you mean '" + hint + "'?"));
    }
  }

  const std::string& file() const { return file_; }

 private:
  const nlohmann::json& j_;
  std::string path_;
  const std::string& file_;
  std::vector<std::string> known_;
};

}  // namespace tp
