//! Generates the gRPC stubs and the reflection descriptor set from `proto/`.
//!
//! The proto files are compiled in Rust by `protox`, so no system `protoc`
//! is needed: a fresh clone builds with the Rust toolchain alone.

use std::{env, error::Error, fs, path::PathBuf};

use protox::prost::Message;
use protox::prost_reflect::prost_types::field_descriptor_proto::{Label, Type};
use protox::prost_reflect::prost_types::FileDescriptorSet;

const PROTO_ROOT: &str = "proto";
const PROTOS: &[&str] = &["proto/arbiter/v1/arbiter.proto"];

fn main() -> Result<(), Box<dyn Error>> {
    println!("cargo:rerun-if-changed={PROTO_ROOT}");

    let descriptors = protox::compile(PROTOS, [PROTO_ROOT])?;
    let out_dir = PathBuf::from(env::var_os("OUT_DIR").ok_or("OUT_DIR is not set")?);
    fs::write(
        out_dir.join("arbiter_descriptor.bin"),
        descriptors.encode_to_vec(),
    )?;

    fs::write(
        out_dir.join("arbiter_fields.rs"),
        field_constants(&descriptors)?,
    )?;
    fs::write(out_dir.join("check_shapes.rs"), check_shapes(&descriptors)?)?;

    let mut config = tonic_prost_build::configure()
        // Written by hand (src/proto/board.rs): one buffer for all of a board's rows.
        .extern_path(".arbiter.v1.Board", "crate::proto::Board")
        // Written by hand (src/proto/chess.rs): one buffer for all of a game's moves.
        .extern_path(".arbiter.v1.ChessSetup", "crate::proto::ChessSetup")
        .extern_path(
            ".arbiter.v1.JudgeChessGameRequest",
            "crate::proto::JudgeChessGameRequest",
        );
    // A live game's setup boxed: it comes once a game, and inline it would make every
    // message of a live game, and every PlayMany action, as large as a setup, to be
    // moved about on every move.
    for setup in setups(&descriptors) {
        config = config.boxed(setup);
    }
    config
        .build_client(true)
        .build_server(false)
        .compile_fds(descriptors.clone())?;

    // The server's stubs, apart: every message is the client's type above, but for the
    // replies, which the server writes straight from its answers into their bytes
    // (src/proto/replies.rs) rather than building and encoding a tree of messages, and
    // the bulk requests, whose items it reads in
    // place (CheckBatch's checks) or decodes from contiguous slices (PlayMany's actions;
    // src/proto/requests.rs). The bytes on the wire are the same.
    let server = out_dir.join("server");
    fs::create_dir_all(&server)?;
    let written = written_replies(&descriptors)?;
    fs::write(
        out_dir.join("written_replies.rs"),
        written_reply_types(&written),
    )?;
    let mut config = tonic_prost_build::configure();
    config = config
        .extern_path(".arbiter.v1", "crate::proto")
        .extern_path(
            ".arbiter.v1.CheckBatchRequest",
            "crate::proto::requests::CheckBatchChecks",
        )
        .extern_path(
            ".arbiter.v1.PlayManyRequest",
            "crate::proto::requests::PlayManyActions",
        );
    for (response, reply) in &written {
        config = config.extern_path(
            format!(".arbiter.v1.{response}"),
            format!("crate::proto::replies::{reply}"),
        );
    }
    config
        .build_client(false)
        .build_server(true)
        .out_dir(&server)
        .compile_fds(descriptors.clone())?;

    // The stock stubs, every message as prost generates it: for the load benchmark's
    // empty-handler baseline (tools/baseline_server.rs), which stands for what a
    // typical tonic service costs.
    let stock = out_dir.join("stock");
    fs::create_dir_all(&stock)?;
    // Default stubs (UNIMPLEMENTED) for what the baseline does not answer, so that an
    // RPC added to the contract asks nothing of it.
    tonic_prost_build::configure()
        .build_client(false)
        .build_server(true)
        .generate_default_stubs(true)
        .out_dir(&stock)
        .compile_fds(descriptors)?;
    Ok(())
}

/// The `setup` field of every live game's request, as a path `boxed` takes
/// (`.arbiter.v1.PlayOthelloRequest.action.setup` when it is in a oneof).
fn setups(descriptors: &FileDescriptorSet) -> Vec<String> {
    let mut paths = Vec::new();
    for message in descriptors
        .file
        .iter()
        .filter(|file| file.package() == "arbiter.v1")
        .flat_map(|file| &file.message_type)
        .filter(|message| message.name().starts_with("Play"))
    {
        for field in message.field.iter().filter(|f| f.name() == "setup") {
            let oneof = field
                .oneof_index
                .and_then(|index| message.oneof_decl.get(usize::try_from(index).ok()?))
                .map(|oneof| format!("{}.", oneof.name()))
                .unwrap_or_default();
            paths.push(format!(".arbiter.v1.{}.{oneof}setup", message.name()));
        }
    }
    paths
}

/// The replies the server writes straight from its answers, each as its response
/// message's name and the written type's (`PlayOthelloResponse` is written as a
/// `PlayOthelloReply`): every RPC's, unary and streamed, so that each reply has one
/// encoder, the server's writer, which the tests hold to prost's.
fn written_replies(
    descriptors: &FileDescriptorSet,
) -> Result<Vec<(String, String)>, Box<dyn Error>> {
    let mut responses = Vec::new();
    for method in descriptors
        .file
        .iter()
        .filter(|file| file.package() == "arbiter.v1")
        .flat_map(|file| &file.service)
        .flat_map(|service| &service.method)
    {
        let response = method
            .output_type()
            .strip_prefix(".arbiter.v1.")
            .ok_or_else(|| {
                format!(
                    "{}: a reply of another package ({}) has no written type",
                    method.name(),
                    method.output_type()
                )
            })?;
        responses.push(response.to_owned());
    }
    responses.sort();
    responses.dedup();
    Ok(responses
        .into_iter()
        .map(|response| {
            let reply = format!("{}Reply", response.trim_end_matches("Response"));
            (response, reply)
        })
        .collect())
}

/// The written reply types (`src/proto/replies.rs` includes them), one
/// `written_reply!` each.
fn written_reply_types(written: &[(String, String)]) -> String {
    let mut out = String::from(
        "// Generated by build.rs from proto/arbiter/v1/arbiter.proto: do not edit.\n",
    );
    for (response, reply) in written {
        out += &format!(
            "written_reply! {{\n    \
             /// A `{response}` as the server writes it, straight from its answers (a bulk\n    \
             /// reply's items in order, each written as soon as it is known).\n    \
             {reply}: super::{response}\n}}\n"
        );
    }
    out
}

/// The field numbers and wire types of every `arbiter.v1` message, as Rust constants
/// (`src/proto/wire.rs` includes them): one module a message, one constant a field,
/// typed by how the field is encoded, so that the hand-written readers and writers name
/// each wire fact once, from the contract itself.
fn field_constants(descriptors: &FileDescriptorSet) -> Result<String, Box<dyn Error>> {
    let mut out = String::from(
        "// Generated by build.rs from proto/arbiter/v1/arbiter.proto: do not edit.\n",
    );
    // Arbiter's messages, and the well-known ones they hold (google.protobuf.Duration).
    let packages = ["arbiter.v1", "google.protobuf"];
    for file in descriptors
        .file
        .iter()
        .filter(|f| packages.contains(&f.package()))
    {
        for message in &file.message_type {
            if !message.nested_type.is_empty() {
                return Err(
                    format!("{}: nested messages need a module each", message.name()).into(),
                );
            }
            out += &format!(
                "\n/// The fields of `{package}.{name}`.\npub(crate) mod {module} {{\n    \
                 #[allow(unused_imports)]\n    use super::{{Fixed32, Fixed64, Len, Varint}};\n\n",
                package = file.package(),
                name = message.name(),
                module = snake_case(message.name()),
            );
            let mut all = Vec::new();
            for field in &message.field {
                let repeated = field.label() == Label::Repeated;
                let wire = match field.r#type() {
                    Type::String | Type::Bytes | Type::Message => "Len",
                    // proto3 packs repeated scalars into one length-delimited field.
                    _ if repeated => "Len",
                    Type::Int32
                    | Type::Int64
                    | Type::Uint32
                    | Type::Uint64
                    | Type::Bool
                    | Type::Enum
                    | Type::Sint32
                    | Type::Sint64 => "Varint",
                    Type::Fixed32 | Type::Sfixed32 | Type::Float => "Fixed32",
                    Type::Fixed64 | Type::Sfixed64 | Type::Double => "Fixed64",
                    Type::Group => {
                        return Err(format!("{}: groups are not proto3", field.name()).into())
                    }
                };
                let constant = field.name().to_uppercase();
                out += &format!(
                    "    /// `{name} = {number}`{repeated}.\n    pub(crate) const {constant}: {wire} = {wire}({number});\n",
                    name = field.name(),
                    number = field.number(),
                    repeated = if repeated { ", repeated" } else { "" },
                );
                all.push(format!("(\"{}\", {})", field.name(), field.number()));
            }
            out += &format!(
                "\n    /// Every field, by name and number, in the contract's order.\n    \
                 #[allow(dead_code)]\n    pub(crate) const ALL: &[(&str, u32)] = &[{}];\n}}\n",
                all.join(", ")
            );
        }
    }
    Ok(out)
}

/// The shape of each check of `Check`'s oneof, as CheckBatch's reader reads it in place
/// (`src/proto/requests/checks.rs` includes it): for the request of each member, by the
/// member's field number, every field as a `Part`. A request of fields the reader does
/// not read (anything but a `Board`, `int32`s, `bool`s, `string`s and messages of the
/// package, repeated or not, and at most one list of pairs, a repeated message of two
/// `int32`s) fails the build, so that no check is ever half read.
fn check_shapes(descriptors: &FileDescriptorSet) -> Result<String, Box<dyn Error>> {
    let messages: Vec<_> = descriptors
        .file
        .iter()
        .filter(|file| file.package() == "arbiter.v1")
        .flat_map(|file| &file.message_type)
        .collect();
    let message = |type_name: &str| {
        let name = type_name.trim_start_matches(".arbiter.v1.");
        messages
            .iter()
            .find(|message| message.name() == name)
            .ok_or_else(|| format!("{type_name}: not a message of arbiter.v1"))
    };
    let check = message("Check")?;
    let mut arms = String::new();
    let mut readers = String::new();
    let mut dispatch = String::new();
    let mut most_scalars = 0;
    let mut slots = String::new();
    for member in &check.field {
        let request = message(member.type_name())?;
        let mut parts = Vec::new();
        let mut reads = Vec::new();
        let mut counts = [0; 2];
        let mut scalars = 0;
        for field in &request.field {
            let number = field.number();
            let repeated = field.label() == Label::Repeated;
            // A field's key, as its varint holds its number and wire type.
            let (varint, len) = (number << 3, number << 3 | 2);
            let (part, read) = match (field.r#type(), repeated) {
                (Type::Message, false) if field.type_name() == ".arbiter.v1.Board" => {
                    counts[0] += 1;
                    (
                        format!("Part::Board({number})"),
                        format!(
                            "{len} if !item.has_board => {{ \
                             item.board = self.board(body, field_bytes(&mut request)?)?; \
                             item.has_board = true; }}"
                        ),
                    )
                }
                (Type::Int32, false) => (
                    format!("Part::Int32({number})"),
                    format!("{varint} => item.scalars[{scalars}] = int32(&mut request)?,"),
                ),
                (Type::Bool, false) => (
                    format!("Part::Bool({number})"),
                    format!(
                        "{varint} => \
                         item.scalars[{scalars}] = i32::from(varint(&mut request)? != 0),"
                    ),
                ),
                (Type::String, repeated) => (
                    format!(
                        "Part::{}({number})",
                        if repeated { "Texts" } else { "Text" }
                    ),
                    format!("{len} => self.string({number}, body, field_bytes(&mut request)?)?,"),
                ),
                (Type::Message, repeated)
                    if !repeated || !message(field.type_name()).is_ok_and(|item| is_pair(item)) =>
                {
                    let name = field.type_name().trim_start_matches(".arbiter.v1.");
                    if name.contains('.') {
                        return Err(format!(
                            "{}.{}: CheckBatch's reader reads messages of the package's top level",
                            request.name(),
                            field.name()
                        )
                        .into());
                    }
                    (
                        format!(
                            "Part::{}({number})",
                            if repeated { "Messages" } else { "Message" }
                        ),
                        format!(
                            "{len} => self.message::<crate::proto::{name}>({number}, body, \
                             field_bytes(&mut request)?)?,"
                        ),
                    )
                }
                (Type::Message, true) => {
                    let item = message(field.type_name())?;
                    let pair: Vec<_> = item
                        .field
                        .iter()
                        .filter(|f| f.r#type() == Type::Int32 && f.label() != Label::Repeated)
                        .map(|f| f.number())
                        .collect();
                    let [first, second] = pair[..] else {
                        return Err(format!("{}: not two int32s", item.name()).into());
                    };
                    if item.field.len() != 2 {
                        return Err(format!("{}: not two int32s", item.name()).into());
                    }
                    counts[1] += 1;
                    (
                        format!("Part::Pairs({number}, {first}, {second})"),
                        format!(
                            "{len} => self.pair::<{first}, {second}>(field_bytes(&mut request)?)?,"
                        ),
                    )
                }
                _ => {
                    return Err(format!(
                        "{}.{}: CheckBatch's reader does not read this field's type",
                        request.name(),
                        field.name()
                    )
                    .into())
                }
            };
            if matches!(field.r#type(), Type::Int32 | Type::Bool) {
                slots += &format!(
                    "        ({kind}, {number}) => Some({scalars}),\n",
                    kind = member.number()
                );
                scalars += 1;
                most_scalars = most_scalars.max(scalars);
            }
            parts.push(part);
            reads.push(read);
        }
        if counts.iter().any(|&count| count > 1) {
            return Err(format!(
                "{}: CheckBatch's reader reads at most one board and one list of pairs",
                request.name()
            )
            .into());
        }
        arms += &format!(
            "        // {member} = {number}: a `{request}`.\n        {number} => Some(&[{parts}]),\n",
            member = member.name(),
            number = member.number(),
            request = request.name(),
            parts = parts.join(", "),
        );
        dispatch += &format!(
            "            {number} => self.request_{number}(body, request, item),\n",
            number = member.number(),
        );
        readers += &format!(
            "\n    /// Reads a `{request}` ({member}), as [`Read::request`] does.\n    \
             #[inline(never)]\n    \
             #[allow(unused_variables, reason = \"a request may hold no board, or no scalar\")]\n    \
             fn request_{number}(\n        &mut self,\n        body: &[u8],\n        \
             mut request: &[u8],\n        item: &mut Item,\n    ) -> Option<()> {{\n        \
             while !request.is_empty() {{\n            \
             match raw_key(&mut request)? {{\n{reads}                \
             _ => return None,\n            }}\n        }}\n        Some(())\n    }}\n",
            member = member.name(),
            number = member.number(),
            request = request.name(),
            reads = reads
                .iter()
                .map(|read| format!("                {read}\n"))
                .collect::<String>(),
        );
    }
    Ok(format!(
        "// Generated by build.rs from proto/arbiter/v1/arbiter.proto: do not edit.\n\n\
         /// The most scalar fields (`int32`s and `bool`s) of any check's request: the room\n\
         /// for an item's scalars, each in its slot.\n\
         pub(crate) const SCALARS: usize = {most_scalars};\n\n\
         /// The slot among an item's scalars of the field `number` of a check of `kind`.\n\
         pub(crate) const fn slot(kind: u32, number: u32) -> Option<usize> {{\n    \
         match (kind, number) {{\n{slots}        _ => None,\n    }}\n}}\n\n\
         /// The fields of the request of the check that is field `kind` of `Check`'s oneof.\n\
         pub(crate) const fn shape(kind: u32) -> Option<&'static [Part]> {{\n    \
         match kind {{\n{arms}        _ => None,\n    }}\n}}\n\n\
         impl Read {{\n    \
         /// Reads the request of a check of `kind` (its bytes `request`, a part of\n    \
         /// `body`) into `item` by its shape, each field by its number and wire type, if it\n    \
         /// is in the plain form (see the module's documentation); `None` if not.\n    \
         #[inline(always)]\n    \
         fn request(\n        &mut self,\n        kind: u32,\n        body: &[u8],\n        \
         request: &[u8],\n        item: &mut Item,\n    ) -> Option<()> {{\n        \
         match kind {{\n{dispatch}            _ => None,\n        }}\n    }}\n{readers}}}\n",
    ))
}

/// Whether `message` is a pair: two `int32`s and nothing else (CheckBatch's reader
/// keeps a repeated one as a list of pairs).
fn is_pair(message: &protox::prost_reflect::prost_types::DescriptorProto) -> bool {
    message.field.len() == 2
        && message
            .field
            .iter()
            .all(|f| f.r#type() == Type::Int32 && f.label() != Label::Repeated)
}

/// `CheckBatchRequest` as `check_batch_request`.
fn snake_case(name: &str) -> String {
    let mut snake = String::new();
    for (i, ch) in name.chars().enumerate() {
        if ch.is_ascii_uppercase() {
            if i > 0 {
                snake.push('_');
            }
            snake.push(ch.to_ascii_lowercase());
        } else {
            snake.push(ch);
        }
    }
    snake
}
