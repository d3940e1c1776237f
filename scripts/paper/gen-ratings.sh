#!/usr/bin/env bash
# A generated ratings file in a MovieLens layout, to try movielens.sh's
# protocol where the real files cannot be downloaded. Likes are a planted
# OrMachine (scpipe simulate: users as cells, items as genes, L codes,
# symmetric --flip noise); each (user, item) is rated with probability
# --rated (MovieLens 100k: 100,000 of 943 x 1682, 6.3%), 4 or 5 stars if
# liked, else 1, 2 or 3, so that binarising at the global mean rating (about
# 3.4) gives the likes back. Not a model of real ratings: a test input.
#
#   scripts/paper/gen-ratings.sh -o FILE [--format tab|colons|csv] [--users 943]
#       [--items 1682] [--rated 0.063] [--L 2] [--density 0.55] [--flip 0.3] [--seed 1] [--force]
#
# --format tab:    user<TAB>item<TAB>rating<TAB>timestamp    (ml-100k u.data)
#          colons: user::item::rating::timestamp             (ml-1m ratings.dat)
#          csv:    userId,movieId,rating,timestamp + header  (ml-latest ratings.csv)
# --density is the expected fraction of likes, from which the factor
# densities follow as in section 4.1. The planted truth is kept in
# FILE.truth/ (scpipe simulate's truth folder).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; }

out="" format=tab users=943 items=1682 rated=0.063 l=2 density=0.55 flip=0.3 seed=1
while [ $# -gt 0 ]; do
  case $1 in
  -o) out=$2; shift 2 ;;
  --format) format=$2; shift 2 ;;
  --users) users=$2; shift 2 ;;
  --items) items=$2; shift 2 ;;
  --rated) rated=$2; shift 2 ;;
  --L) l=$2; shift 2 ;;
  --density) density=$2; shift 2 ;;
  --flip) flip=$2; shift 2 ;;
  --seed) seed=$2; shift 2 ;;
  --force) FORCE=1; shift ;;
  -h | --help) usage; exit 0 ;;
  *) die "unknown argument $1 (see --help)" ;;
  esac
done
[ -n "$out" ] || die "-o FILE is required (see --help)"
case $format in tab | colons | csv) ;; *) die "--format $format: want tab, colons or csv" ;; esac
if [ -e "$out" ] && [ -z "${FORCE:-}" ]; then
  die "$out exists (--force replaces it)"
fi
need_scpipe

# The ratings are written beside FILE and renamed, so that FILE is whole
# or absent.
tmp=$(mktemp -d)
part=$(mktemp "$out.XXXXXX")
trap 'rm -rf "$tmp" "$part"' EXIT
q=$(factor_density "$density" "$l")
"$SCPIPE" simulate -q -o "$tmp/sim" --cells "$users" --genes "$items" -L "$l" \
  --code-density "$q" --usage-density "$q" --flip "$flip" --seed "$seed"

# The MTX lists the likes as "item user count" after a header line of
# sizes; the ratings are drawn in user, then item order, as u.data sorts.
gzip -dcf "$tmp/sim/matrix.mtx"* | awk -v format="$format" -v users="$users" \
  -v items="$items" -v rated="$rated" -v seed="$seed" '
  /^%/ { next }
  !sized { sized = 1; next }
  { like[$2, $1] = 1 }
  END {
    srand(seed)
    sep = format == "tab" ? "\t" : format == "colons" ? "::" : ","
    if (format == "csv") print "userId,movieId,rating,timestamp"
    for (u = 1; u <= users; u++)
      for (i = 1; i <= items; i++) {
        if (rand() >= rated) continue
        r = ((u, i) in like) ? 4 + int(rand() * 2) : 1 + int(rand() * 3)
        print u sep i sep r sep 874724710 + int(rand() * 20000000)
      }
  }' >"$part"
rm -rf "$out.truth"
mv "$tmp/sim/truth" "$out.truth"
# mktemp made the part 0600; the file gets what a redirect would give it.
chmod "$(printf '%o' $((0666 & ~$(umask))))" "$part"
mv "$part" "$out"
note "wrote $(wc -l <"$out") ratings to $out ($format), the planted likes to $out.truth/"
