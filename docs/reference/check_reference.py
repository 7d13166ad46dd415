#!/usr/bin/env python3
"""What Doxygen does not warn about, checked on its XML output (docs/reference/README.md).

    check_reference.py XML_DIR
        prints each problem as `file:line: text` and exits 1 if there is any:
        - an enumerator of a public enum with no description (Doxygen 1.9.4's
          WARN_IF_UNDOCUMENTED says nothing about enumerators);
        - a brief that ends in an abbreviation ("... e.g."): JAVADOC_AUTOBRIEF ends the brief
          at the first ". ", so `e.g. x` cuts it there (write `e.g.\\ x` or "for example");
        - a @par section whose text begins with its heading again, followed by ":" or "("
          (`@par Cost` then "Cost: ...").
    check_reference.py --self-test SOURCE_DIR CMAKE
        runs SOURCE_DIR's docs/reference/build.cmake with CMAKE (Doxygen with the real
        Doxyfile, then this check) on small generated trees: a documented header must pass;
        an undocumented enumerator, a brief cut at "e.g.", a "Cost:" under @par Cost and an
        undocumented class must each fail, naming the problem.

build.cmake runs the first form after Doxygen (the ctest api_reference, the target docs and
scripts/docs.sh); the ctest api_reference_self_test runs the second."""
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

# A brief that ends like this was cut by JAVADOC_AUTOBRIEF at the abbreviation's ". ".
CUT_BRIEF = re.compile(r"(?:^|\W)(e\.g|i\.e|cf|vs|approx|resp|incl)\.$", re.IGNORECASE)


def text(element):
    return " ".join("".join(element.itertext()).split()) if element is not None else ""


def where(element):
    loc = element.find("location")
    if loc is None:
        return "(unknown location)"
    return f"lib/include/{loc.get('file')}:{loc.get('line')}"


def described(element):
    return bool(text(element.find("briefdescription")) or text(element.find("detaileddescription")))


def documented_things(root):
    """(element, name) for each compound and public or protected member of one XML file."""
    for compound in root.iter("compounddef"):
        yield compound, text(compound.find("compoundname"))
        for member in compound.iter("memberdef"):
            if member.get("prot") in ("public", "protected"):
                yield member, text(member.find("qualifiedname")) or text(member.find("name"))


def check_xml(xml_dir):
    problems, seen = [], set()
    for path in sorted(pathlib.Path(xml_dir).glob("*.xml")):
        if path.name in ("index.xml", "Doxyfile.xml"):
            continue
        root = ET.parse(path).getroot()
        for thing, name in documented_things(root):
            key = (thing.get("id"), thing.tag)
            if key in seen:  # a member is listed in its file's XML and its namespace's or class's
                continue
            seen.add(key)
            place = where(thing)
            if thing.tag == "memberdef" and thing.get("kind") == "enum":
                for value in thing.findall("enumvalue"):
                    if not described(value):
                        problems.append(f"{place}: enumerator {text(value.find('name'))} of {name} is not documented")
            brief = text(thing.find("briefdescription"))
            if CUT_BRIEF.search(brief):
                problems.append(f"{place}: the brief of {name} ends at \"{brief[-12:]}\": JAVADOC_AUTOBRIEF cut it at "
                                "the abbreviation's \". \" (write \"e.g.\\ \" or \"for example\")")
            for section in thing.iter("simplesect"):
                if section.get("kind") != "par":
                    continue
                title = text(section.find("title")).rstrip(":")
                first = section.find("para")
                if title and first is not None and re.match(re.escape(title) + r"\s*[:(]", text(first), re.IGNORECASE):
                    problems.append(f"{place}: the @par {title} section of {name} begins with its heading again: "
                                    f"\"{text(first)[:len(title) + 12]}...\"")
    return problems


SAMPLE = '''/** @file
 * A sample header. */
#pragma once
namespace idlewheel {
/** What a sample can be. */
enum class sample_kind {
    first,  ///< The first kind.
    second  ///< The second kind.
};
/** A sample class.
 *
 * @par Cost
 * One store, for example.
 */
class sample {
public:
    /** Its kind. */
    sample_kind kind() const { return sample_kind::first; }
};
}  // namespace idlewheel
'''

# name: (what replaces what in SAMPLE, what the failing check must print)
BROKEN = {
    "undocumented enumerator": (("second  ///< The second kind.", "second"),
                                "enumerator second of idlewheel::sample_kind is not documented"),
    "brief cut at e.g.": (("/** Its kind. */", "/** Its kind, e.g. first. */"), "JAVADOC_AUTOBRIEF cut it"),
    "Cost: under @par Cost": (("One store, for example.", "Cost: one store."),
                              "the @par Cost section of idlewheel::sample begins with its heading again"),
    "undocumented class": (("/** A sample class.", "/* A sample class."), "is not documented"),
}


def run_build(source_dir, cmake, tree, header):
    """Runs build.cmake on a copy of the reference's setup with one header; (exit code, output)."""
    shutil.rmtree(tree, ignore_errors=True)
    (tree / "docs" / "reference").mkdir(parents=True)
    (tree / "lib" / "include" / "idlewheel").mkdir(parents=True)
    shutil.copy(source_dir / "docs" / "reference" / "Doxyfile", tree / "docs" / "reference" / "Doxyfile")
    (tree / "docs" / "reference" / "mainpage.md").write_text("# A sample reference\n\nOne header.\n")
    (tree / "lib" / "include" / "idlewheel" / "sample.hpp").write_text(header)
    run = subprocess.run([cmake, f"-DSOURCE_DIR={tree}", f"-DOUTPUT_DIR={tree / 'out'}", f"-DPYTHON={sys.executable}",
                          "-P", str(source_dir / "docs" / "reference" / "build.cmake")], capture_output=True, text=True)
    return run.returncode, run.stdout + run.stderr


def self_test(source_dir, cmake):
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        code, out = run_build(source_dir, cmake, pathlib.Path(tmp) / "good", SAMPLE)
        if code != 0:
            failures.append(f"a documented header failed the check:\n{out}")
        for name, ((old, new), expected) in BROKEN.items():
            assert old in SAMPLE, old
            code, out = run_build(source_dir, cmake, pathlib.Path(tmp) / "bad", SAMPLE.replace(old, new))
            if code == 0:
                failures.append(f"{name}: the check passed")
            elif expected not in out:
                failures.append(f"{name}: the check failed without saying \"{expected}\":\n{out}")
            else:
                print(f"{name}: fails, as it must")
    for f in failures:
        print(f, file=sys.stderr)
    return 1 if failures else 0


def main(argv):
    if len(argv) == 4 and argv[1] == "--self-test":
        return self_test(pathlib.Path(argv[2]).resolve(), argv[3])
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    problems = check_xml(argv[1])
    for p in problems:
        print(p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
