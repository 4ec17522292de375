#!/usr/bin/env bash
# Pack mjlab 1.6.0 and every dependency it needs that the offline GPU machine lacks, as wheels,
# for the same-GPU race (bench/race_mjlab.sh, docs/race_mjlab.md). That machine has Python 3.12,
# a CUDA build of torch, numpy, onnx, onnxruntime, tensorboard, tqdm, imageio, matplotlib, pyyaml,
# joblib and cloudpickle (and what those pulled in), and no package index.
#
#   bash bench/mjlab_pack.sh [OUT_DIR] [PART_MIB]     (run from the project root, where pip works)
#   bash bench/mjlab_pack.sh --resolve                (print the dependency set anew; packs nothing)
#
# mjlab pins mujoco/mujoco-warp ~=3.11 and rsl-rl-lib==5.4.2, simrl mujoco 4.0 and rsl-rl-lib
# 5.5.1: the two cannot share one install, so this packs its own target. Writes OUT_DIR/1 ...
# OUT_DIR/K (default .ship-mjlab/, each at most PART_MIB, default 58; four today, 188 MiB). A
# file larger than PART_MIB - 2 (imageio-ffmpeg's 65 MiB wheel) is cut into pieces spread over the
# parts. Each part holds `stash.sh`, which copies it into .stash-mjlab/ (kept between calls on the
# same machine);
# the last part also holds `install.sh`, which checks that every part arrived, joins the pieces,
# installs every wheel into .stash-mjlab/site (--no-index --no-deps; separate from simrl's
# .stash/site because the pins conflict) and imports mjlab's training stack once as a check.
#
# PKGS is the closure of mjlab 1.6.0's Requires-Dist, resolved recursively through each
# dependency's METADATA for cp312 manylinux x86_64 (`--resolve` redoes it with pip's resolver and
# prints the set), less:
#   * torch and everything torch pulls in (the machine's own CUDA torch: nvidia-*, triton,
#     cuda-bindings, sympy, networkx, jinja2, filelock, fsspec, setuptools ...);
#   * the machine's packages and what they pull in (numpy, onnx, ml-dtypes, protobuf,
#     tensorboard, grpcio, markdown, werkzeug, absl-py, tqdm, imageio, pillow, matplotlib and its
#     deps, pyyaml, cloudpickle, packaging, python-dateutil, tzdata);
#   * torchvision (rsl-rl-lib's Requires-Dist, but rsl_rl 5.4.2 never imports it, and a wheel
#     from the index must match the machine's torch build exactly, so shipping one would break it).
# plus typing-extensions (already there under torch, but pydantic/anyio want >= 4.16, newer than
# the machine's may be; it is backward compatible, so the copy in the site dir is harmless).
# tensordict is pinned to 0.15.3 (pure Python, the version simrl's offline pack ships) instead
# of the resolver's 0.14.3 (a compiled _C.so): that drops 0.14.3's importlib-metadata, zipp,
# lazy-importer and orjson.
#
# warp-lang 1.19.0 is the same wheel simrl's pack (../shared/offline/pack.sh) ships, and the race
# installs simrl on the same machine first: by default (MJLAB_PACK_SHARE_WARP=1) it is not packed
# again (142 MiB, three parts fewer) and install.sh takes it from simrl's .stash/, checking its
# sha256. MJLAB_PACK_SHARE_WARP=0 packs it here too (mjlab without simrl's stash).
set -euo pipefail

PLAT=(--platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64
      --platform manylinux_2_17_x86_64 --platform manylinux2014_x86_64 --platform manylinux1_x86_64)
PIPX=(--only-binary=:all: --python-version 3.12 --implementation cp "${PLAT[@]}")
PY=${PYTHON:-python3}

if [[ ${1:-} == --resolve ]]; then
  # pip's resolver over the real metadata (no install; wheels without separate metadata files
  # are fetched into a scratch dir), then the graph minus what the GPU machine has.
  tmp=$(mktemp -d)
  trap 'rm -rf "$tmp"' EXIT
  "$PY" -m pip install -q --dry-run --ignore-installed "${PIPX[@]}" --target "$tmp/t" \
    --report "$tmp/report.json" mjlab==1.6.0 tensordict==0.15.3
  "$PY" - "$tmp/report.json" <<'PY'
import json, sys
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name as cn
env = {"python_version": "3.12", "python_full_version": "3.12.3", "platform_system": "Linux",
       "sys_platform": "linux", "platform_machine": "x86_64", "implementation_name": "cpython",
       "platform_python_implementation": "CPython", "os_name": "posix", "extra": ""}
nodes = {}
for item in json.load(open(sys.argv[1]))["install"]:
    md = item["metadata"]
    deps = [cn(Requirement(s).name) for s in md.get("requires_dist") or []
            if Requirement(s).marker is None or Requirement(s).marker.evaluate(env)]
    nodes[cn(md["name"])] = (md["version"], deps)
def reach(roots):
    seen, todo = set(), [cn(r) for r in roots]
    while todo:
        n = todo.pop()
        if n in nodes and n not in seen:
            seen.add(n)
            todo += nodes[n][1]
    return seen
machine = reach(["torch", "numpy", "onnx", "onnxruntime", "tensorboard", "tqdm", "imageio",
                 "matplotlib", "pyyaml", "joblib", "cloudpickle"])
need = (set(nodes) - machine - {"torchvision"}) | {"typing-extensions"}
print(f"# {len(need)} packages ({len(machine)} of the closure are the machine's):")
print(" ".join(f"{n}=={nodes[n][0]}" for n in sorted(need)))
PY
  exit 0
fi

OUT=${1:-.ship-mjlab}
PART_MIB=${2:-58}
STASH=.stash-mjlab
SHARE_WARP=${MJLAB_PACK_SHARE_WARP:-1}
PKGS=(mjlab==1.6.0 mujoco==3.11.0 mujoco-warp==3.11.0 warp-lang==1.19.0 rsl-rl-lib==5.4.2
      tensordict==0.15.3 pyvers==0.2.3
      # mjlab's direct deps and theirs
      prettytable==3.19.0 wcwidth==0.9.4 tyro==1.0.17 docstring-parser==0.18.0 typeguard==4.6.1
      typing-extensions==4.16.0 torchrunx==0.4.0 fabric==3.2.3 invoke==2.2.1 paramiko==5.1.0
      bcrypt==5.0.0 cryptography==50.0.2 cffi==2.1.1 pycparser==3.12 pynacl==1.6.2
      decorator==5.3.1 deprecated==3.0.1 wrapt==2.5.2 trimesh==5.2.0 scipy==1.18.1
      viser==1.1.1 msgspec==0.23.0 requests==2.34.2 certifi==2026.10.19.post1
      charset-normalizer==3.5.3 idna==3.21 urllib3==2.8.0 rich==14.3.4 markdown-it-py==4.3.0
      mdurl==0.1.2 pygments==2.21.0 websockets==16.1.1 zstandard==0.25.0 mjviser==0.0.14
      mediapy==1.2.7 ipython==9.18.1 ipython-pygments-lexers==1.1.1 jedi==0.20.1 parso==0.8.7
      matplotlib-inline==0.2.2 traitlets==5.16.1 pexpect==4.9.0 ptyprocess==0.7.0
      prompt-toolkit==3.0.53 psutil==7.2.2 stack-data==0.6.3 asttokens==3.0.2 executing==2.3.0
      pure-eval==0.2.4 imageio-ffmpeg==0.8.1 onnxscript==0.7.2 onnx-ir==1.1.0
      gitpython==3.2.1 gitdb==4.0.12 smmap==5.0.3
      # mujoco's own
      etils==1.15.0 glfw==2.11.0 pyopengl==3.1.10
      # wandb (mjlab's velocity runner imports it at module level, so it is needed offline too)
      wandb==0.31.0 click==8.5.1 cwevals==0.0.1b1 anyio==4.16.0 sniffio==1.3.1 distro==1.9.0
      httpx==0.29.0 httpcore==1.0.9 h11==0.16.0 pydantic==2.14.4 pydantic-core==2.50.5
      annotated-types==0.8.0 typing-inspection==0.4.5 platformdirs==4.14.9 xxhash==4.1.0
      opentelemetry-api==1.45.2 opentelemetry-sdk==1.45.2 opentelemetry-semantic-conventions==0.66b2
      opentelemetry-exporter-otlp-proto-http==1.45.2 opentelemetry-exporter-otlp-proto-common==1.45.2
      opentelemetry-exporter-otlp-common==0.66b2 opentelemetry-exporter-http-transport==0.66b2
      opentelemetry-proto==1.45.2 googleapis-common-protos==1.76.0)

# keep the parts and the stash out of git (in a worktree .git is a file: ask git for the path)
if exclude=$(git rev-parse --git-path info/exclude 2>/dev/null); then
  mkdir -p "$(dirname "$exclude")"
  for d in "/$OUT/" "/$STASH/"; do
    grep -qxF "$d" "$exclude" 2>/dev/null || echo "$d" >> "$exclude"
  done
fi

rm -rf "$OUT" && mkdir -p "$OUT/wheels"
"$PY" -m pip download -q --no-deps "${PIPX[@]}" -d "$OUT/wheels" "${PKGS[@]}"
n_whl=$(ls "$OUT/wheels"/*.whl | wc -l)
if (( n_whl != ${#PKGS[@]} )); then
  echo "expected ${#PKGS[@]} wheels, got $n_whl" >&2
  exit 1
fi
cd "$OUT/wheels"
ls ./*.whl | sed 's|^\./||' > MANIFEST
echo "wheels: $n_whl, $(du -cm ./*.whl | tail -1 | cut -f1) MiB in all"
: > SHARED  # wheels install.sh takes from simrl's .stash/ instead: name sha256
if [[ $SHARE_WARP == 1 ]]; then
  for f in warp_lang-*.whl; do
    echo "$f $(sha256sum "$f" | cut -d' ' -f1)" >> SHARED
    echo "not packed (install.sh takes it from simrl's .stash/): $f, $(du -m "$f" | cut -f1) MiB"
    rm "$f"
  done
fi
# cut every file too big for one part into pieces (imageio-ffmpeg's 65 MiB wheel today, which
# carries an ffmpeg binary; warp-lang's too where it is packed), listed in SPLIT
: > SPLIT
for f in *.whl; do
  if (( $(stat -c %s "$f") > (PART_MIB - 2) * 1048576 )); then
    split -b $((PART_MIB - 2))M -d "$f" "$f.piece"
    echo "$f $(ls "$f".piece* | wc -l)" >> SPLIT
    rm "$f"
  fi
done
mkdir ../meta && mv MANIFEST SPLIT SHARED ../meta/  # these ride in the last part, with install.sh
# first-fit decreasing: the biggest files first, each into the first part with room for it
"$PY" - "$PART_MIB" <<'PY'
import os, shutil, sys
limit = int(sys.argv[1]) * 2**20 - 64 * 2**10  # room for stash.sh and install.sh
parts = []  # bytes used per part
for f in sorted(os.listdir("."), key=os.path.getsize, reverse=True):
    size = os.path.getsize(f)
    i = next((i for i, used in enumerate(parts) if used + size <= limit), len(parts))
    if i == len(parts):
        parts.append(0)
        os.mkdir(f"../{i + 1}")
    parts[i] += size
    shutil.move(f, f"../{i + 1}/{f}")
PY
cd .. && rmdir wheels
last=$(ls -d [0-9]* | sort -n | tail -1)
mv meta/* "$last/" && rmdir meta
for p in $(ls -d [0-9]*); do
  printf '#!/usr/bin/env bash\nmkdir -p %s && cp %s/%s/* %s/ && echo "mjlab part %s of %s stashed"\n' \
    "$STASH" "$OUT" "$p" "$STASH" "$p" "$last" > "$p/stash.sh"
done
cat > "$last/install.sh" <<'INNER'
#!/usr/bin/env bash
# Check that every part was stashed, join the split wheels, install every wheel into
# .stash-mjlab/site (no index, no deps), then import mjlab's training stack once.
set -euo pipefail
cd .stash-mjlab
missing=()
# wheels shared with simrl's stash (warp-lang): whole there after simrl's install.sh, else joined
while read -r w sha; do
  [ -f "$w" ] && continue
  if [ -f "../.stash/$w" ]; then cp "../.stash/$w" .
  elif ls "../.stash/$w".piece* > /dev/null 2>&1; then cat "../.stash/$w".piece* > "$w"
  else missing+=("$w (from simrl's .stash/: stash and install simrl's .ship parts first)"); continue
  fi
  if [[ $(sha256sum "$w" | cut -d' ' -f1) != "$sha" ]]; then
    rm -f "$w"
    missing+=("$w (simrl's copy differs from the one mjlab was packed with: repack with MJLAB_PACK_SHARE_WARP=0)")
  fi
done < SHARED
while read -r w n; do
  [ -f "$w" ] && continue
  have=$(ls "$w".piece* 2>/dev/null | wc -l)
  if (( have == n )); then cat "$w".piece* > "$w"; else missing+=("$w ($have of $n pieces)"); fi
done < SPLIT
while read -r w; do
  [ -f "$w" ] || grep -qF "$w " SPLIT SHARED || missing+=("$w")
done < MANIFEST
if (( ${#missing[@]} )); then
  echo "missing from .stash-mjlab (stash every part of .ship-mjlab first): ${missing[*]}" >&2
  exit 1
fi
python3 -m pip install -q --no-index --no-deps --no-compile --target site --upgrade $(cat MANIFEST)
# the machine's own packages the stack leans on, and one import of what `train` loads
PYTHONPATH=$PWD/site MUJOCO_GL=egl WANDB_MODE=disabled MJLAB_WARP_QUIET=1 python3 - <<'PY'
import importlib.metadata as md
for p in ("torch", "numpy", "protobuf", "typing_extensions", "pillow", "tensorboard", "onnx"):
    try:
        print(f"  {p} {md.version(p)}")
    except md.PackageNotFoundError:
        print(f"  {p}: not installed")
import mujoco, mujoco_warp, warp, rsl_rl.runners, wandb, mjlab, mjlab.tasks  # noqa: E401,F401
from mjlab.tasks.registry import list_tasks
need = {"Mjlab-Velocity-Flat-Unitree-Go1", "Mjlab-Velocity-Flat-Unitree-G1"}
assert need <= set(list_tasks()), sorted(need - set(list_tasks()))
print(f"mjlab {md.version('mjlab')} | mujoco {mujoco.__version__} | mujoco_warp "
      f"{md.version('mujoco-warp')} | warp {warp.__version__} | rsl-rl-lib {md.version('rsl-rl-lib')}: "
      "imports fine, both race tasks registered")
PY
echo "installed into .stash-mjlab/site; bench/race_mjlab.sh puts it on PYTHONPATH for mjlab's runs"
INNER
chmod +x */*.sh
for p in $(ls -d [0-9]* | sort -n); do
  echo "$OUT/$p $(du -sm "$p" | cut -f1) MiB ($(du -sb "$p" | cut -f1) bytes): $(ls "$p" | grep -v '\.sh$' | tr '\n' ' ')"
done
