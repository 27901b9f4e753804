"""The machine a measurement runs on, and the name of its page under docs/performance/.

usage: python3 scripts/lib/machine.py [slug | describe]
  slug      (default) the page's name: the CPU as /proc/cpuinfo names it, lower case, without
            trademarks and clock, an AMD CPU's Zen generation from its family and model, then
            the cores: "intel-xeon-2core", "amd-epyc-zen4-2core"
  describe  one line: the CPU's model name, its cores and its memory

Imported by the scripts that write under docs/performance/ (slug(), describe()), and run by the
shell ones (scripts/bench-report, scripts/compare-peers). PTRON_MACHINE in the environment
names the page instead (for a machine the rules would confuse with another).
"""
import os
import re
import sys


def cpuinfo():
    """(model name, vendor, family, model) of the first CPU; empty strings where unknown."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break  # the first processor's block is enough
                key, _, value = line.partition(":")
                fields[key.strip()] = value.strip()
    except OSError:
        pass
    return (fields.get("model name", "unknown"), fields.get("vendor_id", ""),
            fields.get("cpu family", ""), fields.get("model", ""))


def zen_generation(family, model):
    """AMD's Zen generation from the CPU family and model (AMD's published numbering)."""
    try:
        fam, mod = int(family), int(model)
    except ValueError:
        return ""
    if fam == 23:
        return "zen2" if mod >= 0x30 else "zen"
    if fam == 25:
        return "zen4" if 0x10 <= mod <= 0x1f or 0x60 <= mod <= 0x7f or 0xa0 <= mod <= 0xaf else "zen3"
    if fam == 26:
        return "zen5"
    return ""


def slug():
    if os.environ.get("PTRON_MACHINE"):
        return os.environ["PTRON_MACHINE"]
    name, vendor, family, model = cpuinfo()
    text = re.sub(r"\((R|TM|r|tm)\)|@.*$|\b\d+-Core\b|\bCPU\b|\bProcessor\b", " ", name)
    words = [w.lower() for w in re.findall(r"[A-Za-z0-9]+", text)]
    gen = zen_generation(family, model) if vendor == "AuthenticAMD" else ""
    if gen and gen not in words:
        words.append(gen)
    return "-".join(words + [f"{os.cpu_count()}core"])


def describe():
    name = cpuinfo()[0]
    try:
        mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
        memory = f", {mem:.1f} GiB memory"
    except (ValueError, OSError):
        memory = ""
    return f"{name}, {os.cpu_count()} cores{memory}"


if __name__ == "__main__":
    what = sys.argv[1] if len(sys.argv) > 1 else "slug"
    if what in ("-h", "--help"):
        print(__doc__.strip())
    elif what in ("slug", "describe"):
        print(slug() if what == "slug" else describe())
    else:
        sys.exit(f"machine.py: unknown argument {what!r} (slug or describe)")
