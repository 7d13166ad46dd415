// Copyright (c) 2026 The idlewheel authors. Distributed under the Boost Software License 1.0.
#ifndef IDLEWHEEL_VERSION_HPP
#define IDLEWHEEL_VERSION_HPP

/** @file
 * @brief The library's version, for a program that checks at compile time what it builds against.
 *
 * This header is the one place the version is written. The top-level CMakeLists.txt reads it
 * from here, so the version `find_package(idlewheel 1.1)` compares against is this one.
 * Versions follow Semantic Versioning: a 1.x release keeps every 1.0 program compiling and
 * behaving; deprecated names go only in 2.0 (CHANGELOG.md lists them).
 */

/// The major version: a change here may remove deprecated names.
#define IDLEWHEEL_VERSION_MAJOR 1
/// The minor version: new names and forms, nothing removed.
#define IDLEWHEEL_VERSION_MINOR 1
/// The patch version: fixes only.
#define IDLEWHEEL_VERSION_PATCH 0

/// The version as one number, as Boost writes its own: major * 100000 + minor * 100 + patch
/// (1.1.0 is 100100). Compare it: `#if IDLEWHEEL_VERSION >= 100100`.
#define IDLEWHEEL_VERSION (IDLEWHEEL_VERSION_MAJOR * 100000 + IDLEWHEEL_VERSION_MINOR * 100 + IDLEWHEEL_VERSION_PATCH)

/// The version as a string, "major.minor.patch".
#define IDLEWHEEL_VERSION_STRING "1.1.0"

#endif
