# hermes-pm: the files of one resolution, fetched by Nix and checked against their recorded hashes.
#
# Nothing resolves here: the input is what `hermes pm` already decided, either
#   - a receipt (JSON): `<home>/pm/receipts/latest.json` after a `hermes pm resolve`, or after a
#     `hermes pm sync` that built something (a no-op sync records no resolution);
#   - a generation record: `<home>/pm/generations/<id>/generation.json`;
#   - the file `hermes pm export --format nix [--selected]` writes;
#   - a `pylock.toml` from `hermes pm export --format pylock [--selected]` (the same file
#     `hermes pm sync --from` builds from, so one committed file serves both);
#   - either one already read into an attribute set.
#
# Returns a list, in the recorded order, of one attribute set per file:
#   { name, version, filename, url, hash, origins, wheel }
# where `wheel` is the fetched store path (its name is the file's own name) and `hash` the recorded
# sha256 (SRI form from a Nix export, hex otherwise); Nix's fetchers accept both. `origins` are
# attribute sets ({ kind; plugin; file; }) except from a pylock, where they are strings.
#
# Arguments:
#   source    a path (.json = receipt or generation record, .toml = pylock, otherwise an exported
#             .nix file) or an attribute set.
#   fetchurl  how to fetch; called as `fetchurl { url; name; sha256; }`. The default,
#             builtins.fetchurl, fetches while evaluating (Nix >= 2.0); pass `pkgs.fetchurl` to
#             fetch at build time as fixed-output derivations instead.
{ source, fetchurl ? builtins.fetchurl }:
let
  data =
    if builtins.isAttrs source then source
    else if builtins.match ".*\\.json" (toString source) != null
    then builtins.fromJSON (builtins.readFile source)
    else if builtins.match ".*\\.toml" (toString source) != null
    then builtins.fromTOML (builtins.readFile source)
    else import source;

  fromRecord = p: {
    inherit (p) name version;
    inherit (p.file) filename url;
    hash = p.file.sha256;
    origins = p.required_by;
  };

  # A pylock.toml written by `hermes pm export --format pylock` has one file per package (its
  # wheel for the one target it was resolved for, or its sdist).
  fromLock = p:
    let file = if p ? wheels then builtins.head p.wheels else p.sdist;
    in {
      inherit (p) name version;
      inherit (file) url;
      filename = file.name or (baseNameOf file.url);
      hash = file.hashes.sha256;
      origins = (p.tool.hermes-pm or { }).required-by or [ ];
    };

  packages =
    if data ? lock-version then map fromLock data.packages
    else if data ? resolution then
      (if data.resolution == null
       then throw ("hermes-pm: this receipt (kind ${data.kind or "?"}, outcome ${data.outcome or "?"}) "
         + "records no resolution; use the receipt of a resolve, or `hermes pm export --format nix --selected`")
       else map fromRecord data.resolution.packages)
    else if (data.format or "") == "hermes-pm/wheels-1" then data.packages
    else throw "hermes-pm: not a receipt, a generation record or an export of hermes pm (format ${data.format or "unknown"})";

  fetch = p: p // { wheel = fetchurl { inherit (p) url; name = p.filename; sha256 = p.hash; }; };
in
map fetch packages
