// Reading numbers out of JSON documents whose numbers may be stored as int64, uint64 or double
// (Boost.JSON keeps the kind it parsed), with 0 for anything missing.
#ifndef IDLEWHEEL_LOADGEN_JSON_UTIL_HPP
#define IDLEWHEEL_LOADGEN_JSON_UTIL_HPP

#include <boost/json/array.hpp>
#include <boost/json/object.hpp>
#include <boost/json/value.hpp>

#include <initializer_list>
#include <string_view>

namespace loadgen {

[[nodiscard]] inline double as_number(const boost::json::value* v) noexcept {
    if (v == nullptr) return 0;
    if (v->is_double()) return v->get_double();
    if (v->is_int64()) return static_cast<double>(v->get_int64());
    if (v->is_uint64()) return static_cast<double>(v->get_uint64());
    if (v->is_bool()) return v->get_bool() ? 1 : 0;
    return 0;
}

/// The value at a path of object keys, or null.
[[nodiscard]] inline const boost::json::value* find(const boost::json::object& o,
                                                    std::initializer_list<std::string_view> path) noexcept {
    const boost::json::object* at = &o;
    const boost::json::value* v = nullptr;
    for (const auto key : path) {
        if (at == nullptr) return nullptr;
        v = at->if_contains(key);
        if (v == nullptr) return nullptr;
        at = v->if_object();
    }
    return v;
}

[[nodiscard]] inline double number(const boost::json::object& o,
                                   std::initializer_list<std::string_view> path) noexcept {
    return as_number(find(o, path));
}

[[nodiscard]] inline const boost::json::object& object_at(const boost::json::object& o,
                                                          std::initializer_list<std::string_view> path) {
    static const boost::json::object empty;
    const auto* v = find(o, path);
    return v != nullptr && v->is_object() ? v->get_object() : empty;
}

[[nodiscard]] inline const boost::json::array& array_at(const boost::json::object& o,
                                                        std::initializer_list<std::string_view> path) {
    static const boost::json::array empty;
    const auto* v = find(o, path);
    return v != nullptr && v->is_array() ? v->get_array() : empty;
}

[[nodiscard]] inline std::string_view string_at(const boost::json::object& o,
                                                std::initializer_list<std::string_view> path) {
    const auto* v = find(o, path);
    return v != nullptr && v->is_string() ? std::string_view(v->get_string()) : std::string_view();
}

}  // namespace loadgen

#endif
