#!/usr/bin/env bash
# install.prefix_runs_the_main_job: `cmake --install` to a temporary prefix, then use wavekit
# from there as a user would. The prefix's companion files, not the build tree's, must be the
# ones used: the loader's own log (LD_DEBUG=libs) names the shim and the emulator's runtime the
# application loaded, and the rewritten object's WAVEKIT note names the probe library it got.
# usage: install_test.sh BUILD PROJECT_SOURCE EXAMPLES_DIR WORK CMAKE NINJA LIBDIR HAVE_PROFILE_HSA
set -uo pipefail
build=$1 project=$2 examples=$3 work=$4 cmake=$5 ninja=$6 libdir=$7 have_profile_hsa=$8

fail() { echo "FAIL: $*"; exit 1; }
rm -rf "$work" && mkdir -p "$work" || fail "cannot make $work"
prefix=$work/prefix
pkglib=$prefix/$libdir/wavekit

"$cmake" --install "$build" --prefix "$prefix" >"$work/install.log" 2>&1 ||
  { cat "$work/install.log"; fail "cmake --install $build --prefix $prefix"; }
for file in bin/wavekit "$libdir/wavekit/libwavekit-preload.so" \
            "$libdir/wavekit/emulator/libhsa-runtime64.so.1" "$libdir/wavekit/.wavekit-installation" \
            "$libdir/wavekit/probes/callret.gfx90a.co" "$libdir/wavekit/probes/blocktrace.gfx942.co" \
            include/wavekit/probe/probe.h include/wavekit/probe/capture.h \
            include/wavekit/probe/hostcall.h include/wavekit/hostcall/protocol.h \
            "$libdir/cmake/wavekit/wavekitConfig.cmake" "$libdir/cmake/wavekit/wavekitTargets.cmake" \
            "$libdir/cmake/wavekit/ProbeLibrary.cmake"; do
  [[ -e $prefix/$file ]] || fail "the prefix has no $file"
done
[[ -z $(find "$pkglib/probes" -name '*.parts' -o -name '*.linked.co') ]] ||
  fail "intermediate files of the probe libraries were installed"
echo "installed: $(cd "$prefix" && find . -type f | wc -l) files"

# The CLI itself from the prefix.
wavekit=$prefix/bin/wavekit
"$wavekit" --help >/dev/null || fail "$wavekit --help"
"$wavekit" profile --help >/dev/null || fail "$wavekit profile --help"

# A user's probe library, with find_package(wavekit) (and the installed `wavekit probe-lib`).
"$cmake" -S "$project" -B "$work/user" -G Ninja -DCMAKE_MAKE_PROGRAM="$ninja" \
  -DCMAKE_PREFIX_PATH="$prefix" >"$work/user-configure.log" 2>&1 ||
  { cat "$work/user-configure.log"; fail "configuring a project with find_package(wavekit)"; }
"$cmake" --build "$work/user" >"$work/user-build.log" 2>&1 ||
  { cat "$work/user-build.log"; fail "building a probe library with wavekit_add_probe_library()"; }
grep -q "$prefix/bin/wavekit probe-lib" "$work/user/build.ninja" ||
  fail "the probe library was not post-processed by the installed wavekit"
user_probes=$work/user/entry_probes.co
[[ -s $user_probes ]] || fail "no $user_probes"
echo "user probe library: $user_probes"

# The main job from the prefix.
LD_DEBUG=libs LD_DEBUG_OUTPUT=$work/ld "$wavekit" run --tool bbcount --tool-out "$work/bbcount" \
  -- "$examples/divergent" >"$work/run.out" 2>"$work/run.err" ||
  { cat "$work/run.out" "$work/run.err"; fail "wavekit run --tool bbcount from the prefix"; }
cat "$work/run.out" "$work/run.err"
grep -q "0 wrong" "$work/run.out" || fail "divergent did not check out"
grep -q "divergent: 1 dispatch, 64 waves reported" "$work/run.err" || fail "no per-wave result"
grep -q "12 distinct per-wave profiles" "$work/run.err" || fail "no per-wave profiles"
[[ -s $work/bbcount/divergent.0.json ]] || fail "no $work/bbcount/divergent.0.json"
loaded=$(cat "$work"/ld.* 2>/dev/null)
grep -q "calling init: $pkglib/libwavekit-preload.so" <<<"$loaded" ||
  fail "the application did not load the prefix's shim ($pkglib/libwavekit-preload.so)"
grep -q "calling init: $pkglib/emulator/libhsa-runtime64.so.1" <<<"$loaded" ||
  fail "the application did not load the prefix's emulator runtime"
! grep "calling init: $build/" <<<"$loaded" | grep -vq "calling init: $prefix/" ||
  fail "a library of the build tree was loaded"

# rewrite with a tool that has a probe library: the prefix's probes/.
"$wavekit" rewrite "$examples/calls.co" -o "$work/calls.callret.co" --tool callret \
  >"$work/rewrite.out" 2>&1 || { cat "$work/rewrite.out"; fail "wavekit rewrite --tool callret"; }
"$wavekit" inspect "$work/calls.callret.co" >/dev/null 2>&1 || fail "inspect of the rewritten object"
grep -aq "$pkglib/probes/callret.gfx90a.co" "$work/calls.callret.co" ||
  fail "the rewritten object's note does not name the prefix's callret.gfx90a.co"
echo "rewrite --tool callret: the note names $pkglib/probes/callret.gfx90a.co"
"$wavekit" run --tool callret --tool-out "$work/callret" -- "$examples/calls" \
  >"$work/callret.out" 2>&1 || { cat "$work/callret.out"; fail "wavekit run --tool callret"; }

# A custom plan with the user's probe library.
"$wavekit" run --plan "$project/plan.json" --probe-lib "$user_probes" --tool-out "$work/custom" \
  -- "$examples/divergent" >"$work/custom.out" 2>&1 ||
  { cat "$work/custom.out"; fail "wavekit run --plan with the user's probe library"; }
grep -q "divergent: 1 dispatch, 64 waves reported" "$work/custom.out" ||
  { cat "$work/custom.out"; fail "the custom plan reported no waves"; }
echo "custom plan with the user's probe library: 64 waves reported"

# The profiler's HSA backend from the prefix, on the emulator.
if [[ $have_profile_hsa == 1 ]]; then
  [[ -e $pkglib/libwavekit_profile_hsa.so ]] || fail "the prefix has no libwavekit_profile_hsa.so"
  LD_LIBRARY_PATH=$pkglib/emulator WAVEKIT_PROFILE_QUIET=1 LD_DEBUG=libs \
    LD_DEBUG_OUTPUT=$work/ld-profile "$wavekit" profile --hsa -o "$work/profile" \
    -- "$examples/divergent" >"$work/profile.out" 2>&1 ||
    { cat "$work/profile.out"; fail "wavekit profile --hsa from the prefix"; }
  grep -q '"divergent' "$work/profile/profile.hatchet" || fail "the profile has no divergent kernel"
  grep -q "calling init: $pkglib/libwavekit_profile_hsa.so" "$work"/ld-profile.* ||
    fail "the application did not load the prefix's libwavekit_profile_hsa.so"
  "$wavekit" profile-view "$work/profile" >/dev/null || fail "profile-view of the prefix's profile"
  echo "profile --hsa: divergent profiled with $pkglib/libwavekit_profile_hsa.so"
fi
echo "PASS"
