"""Where meson installs the ptron package: the directory under PREFIX (argv[1]) that this
interpreter searches, else the standard lib/python3.X/site-packages under PREFIX."""
import os
import sys
import sysconfig

prefix = sys.argv[1]
for path in sys.path:
    rel = os.path.relpath(path, prefix)
    if rel.startswith("lib" + os.sep) and path.endswith(("dist-packages", "site-packages")):
        print(path)
        break
else:
    print(sysconfig.get_path("purelib", "posix_prefix", vars={"base": prefix}))
