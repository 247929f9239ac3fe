# shellcheck shell=bash # sourced, not run
# The golden corpus file (tests/golden/corpus.txt, described there), read
# the same way by every script that records its sessions: golden_corpus.sh
# (integration.golden_corpus, tools/bless.sh) and
# tests/wasm/golden_corpus_wasm.sh (wasm.golden_corpus). The sourcing
# script sets build, src, corpus, scriptgen and fail() first.
#
#   lib_path NAME     the library of a game or reloads column name
#   data_path FOLDER  a data folder of the reloads column
#   read_corpus       checks the file line by line into the arrays names,
#                     games, seeds, players, steps, inputs, reloads, goldens
#   golden_of I       session i's golden file, relative to the source tree
#   record_args I LOG [nogen]  cradle-record's arguments for session i in
#                     $args; a generated script is written beside the log
#                     (not with nogen)

# A library name of the corpus file's game and reloads columns, as a path.
lib_path() {
  case $1 in
    counter) echo "$build/shared/games/counter/counter.so" ;;
    inc5) echo "$build/tests/games/reload_inc5.so" ;;
    vanguard) echo "$build/shared/games/vanguard/vanguard.so" ;;
    rapid) echo "$build/tests/games/vanguard_rapid.so" ;;
    *) return 1 ;;
  esac
}
# A data folder of the reloads column: "shipped" is vanguard's own.
data_path() {
  if [ "$1" = shipped ]; then echo "$src/shared/games/vanguard/data"; else echo "$src/tests/golden/data/$1"; fi
}

read_corpus() {
  names=() games=() seeds=() players=() steps=() inputs=() reloads=() goldens=()
  lineno=0
  bad() { fail "$corpus:$lineno: $*"; }
  while read -r name game seed np ns input reload golden extra; do
    lineno=$((lineno + 1))
    case "$name" in ''|'#'*) continue ;; esac
    [ -n "$golden" ] && [ -z "$extra" ] || bad "expected 8 fields: name game seed players steps input reloads golden"
    [[ $name =~ ^[a-z0-9_]+$ ]] || bad "name '$name': use a-z, 0-9 and _"
    for seen in "${names[@]}"; do [ "$seen" != "$name" ] || bad "session '$name' is listed twice"; done
    [ "$game" = counter ] || [ "$game" = vanguard ] || bad "game '$game' is not counter or vanguard"
    [[ $seed =~ ^[0-9]+$ ]] || bad "seed '$seed' is not a number"
    [[ $np =~ ^[1-8]$ ]] || bad "players '$np' is not 1..8"
    [[ $ns =~ ^[1-9][0-9]*$ ]] || bad "steps '$ns' is not a number of steps"
    case "$input" in
      random|bots|gen:churn|gen:late|gen:leave|gen:hold|gen:mash) ;;
      *.input) [ -f "$src/tests/golden/$input" ] || bad "script tests/golden/$input does not exist" ;;
      *) bad "input '$input' is not random, bots, gen:churn|late|leave|hold|mash or a .input file" ;;
    esac
    if [ "$reload" != - ]; then
      IFS=, read -ra parts <<<"$reload"
      for part in "${parts[@]}"; do
        if [[ $part =~ ^[0-9]+:data=[a-z0-9_]+$ ]]; then
          [ -d "$(data_path "${part#*:data=}")" ] || bad "data folder $(data_path "${part#*:data=}") does not exist"
          continue
        fi
        [[ $part =~ ^[0-9]+:[a-z0-9]+$ ]] && lib_path "${part#*:}" >/dev/null ||
          bad "reload '$part' is not STEP:counter|inc5|vanguard|rapid or STEP:data=FOLDER"
      done
    fi
    [[ $golden =~ ^(full|digest:[1-9][0-9]*)$ ]] || bad "golden '$golden' is not full or digest:W"
    names+=("$name") games+=("$game") seeds+=("$seed") players+=("$np") steps+=("$ns")
    inputs+=("$input") reloads+=("$reload") goldens+=("$golden")
  done <"$corpus"
  [ ${#names[@]} -gt 0 ] || fail "$corpus lists no session"
}

# The committed golden file of session i, relative to the source tree.
golden_of() {
  case ${goldens[$1]} in
    full) echo "tests/golden/${names[$1]}.golden" ;;
    *) echo "tests/golden/corpus/${names[$1]}.digest" ;;
  esac
}

# record_args I LOG [nogen]: cradle-record's arguments for session i in
# $args; a generated script is written beside the log (not with nogen).
record_args() {
  local i=$1 log=$2 gen=${3:-}
  args=(--game "$(lib_path "${games[$i]}")" --log "$log" --seed "${seeds[$i]}" --players "${players[$i]}"
        --steps "${steps[$i]}" --no-check)
  case ${inputs[$i]} in
    random) ;;
    bots) args+=(--bots) ;;
    gen:*) [ -n "$gen" ] || "$scriptgen" "${inputs[$i]#gen:}" "${seeds[$i]}" "${players[$i]}" "${steps[$i]}" >"$log.input"
           args+=(--script "$log.input") ;;
    *) args+=(--script "$src/tests/golden/${inputs[$i]}") ;;
  esac
  if [ "${reloads[$i]}" != - ]; then
    IFS=, read -ra parts <<<"${reloads[$i]}"
    for part in "${parts[@]}"; do
      case $part in
        *:data=*) args+=(--data-at "${part%%:*}:$(data_path "${part#*:data=}")") ;;
        *) args+=(--reload "${part%%:*}:$(lib_path "${part#*:}")") ;;
      esac
    done
  fi
}
