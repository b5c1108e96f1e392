//! The contract as the tests read it, from its descriptor set: every check of
//! CheckBatch's `Check` oneof with its request's fields, its own unary RPC and its place
//! in `CheckResult`; and a call of any RPC by its path, its messages as bytes. A test
//! driven by these covers every check the contract has, a new game's among them, with
//! no line of its own.

use arbiter::proto::FILE_DESCRIPTOR_SET;
use prost::encoding::{bool as boolean, bytes, int32, message};
use prost::Message;
use prost_types::field_descriptor_proto::{Label, Type};
use prost_types::{DescriptorProto, FileDescriptorSet};
use tonic::transport::Channel;
use tonic::{Request, Status};

#[path = "../../benches/support/raw_codec.rs"]
mod raw_codec;
use raw_codec::Raw;

/// A field of a check's request, by its number.
#[derive(Debug, Clone, Copy)]
pub enum Field {
    /// A `Board`.
    Board(u32),
    /// An `int32`.
    Int32(u32),
    /// A `bool`.
    Bool(u32),
    /// A `string`.
    Text(u32),
    /// A `repeated string`.
    Texts(u32),
    /// A message (not a `Board`).
    Message(u32),
    /// A repeated message (not a list of pairs).
    Messages(u32),
    /// A repeated message of two `int32`s: its number, then theirs.
    Pairs(u32, u32, u32),
}

/// One kind of check, as the contract describes it.
#[derive(Debug, Clone)]
pub struct CheckKind {
    /// Its field in `Check`'s oneof.
    pub number: u32,
    /// That field's name (`check_connect_four`).
    pub name: String,
    /// Its own unary RPC's path (`/arbiter.v1.ArbiterService/CheckConnectFour`).
    pub path: String,
    /// The field of `CheckResult`'s oneof its RPC's reply goes in.
    pub result: u32,
    /// Its request's fields.
    pub fields: Vec<Field>,
    /// The values its game's own corpus (`arbiter::check_corpus`) gives each of its
    /// string and message fields, by number: meaningful values to draw from, whatever
    /// the game (an Othello colour, a chess position).
    pub samples: Vec<(u32, Vec<u8>)>,
}

fn arbiter_messages() -> (
    Vec<DescriptorProto>,
    Vec<prost_types::MethodDescriptorProto>,
) {
    let set = FileDescriptorSet::decode(FILE_DESCRIPTOR_SET).expect("the descriptor set");
    let file = set
        .file
        .into_iter()
        .find(|file| file.package() == "arbiter.v1")
        .expect("arbiter.v1");
    let methods = file
        .service
        .iter()
        .flat_map(|service| service.method.clone())
        .collect();
    (file.message_type, methods)
}

/// Every check of `Check`'s oneof, in the contract's order.
pub fn check_kinds() -> Vec<CheckKind> {
    let (messages, methods) = arbiter_messages();
    let message = |type_name: &str| {
        let name = type_name.trim_start_matches(".arbiter.v1.");
        messages
            .iter()
            .find(|message| message.name() == name)
            .unwrap_or_else(|| panic!("{name} is not a message"))
    };
    let result_of = |type_name: &str| {
        let result = message("CheckResult");
        result
            .field
            .iter()
            .find(|field| field.type_name() == type_name)
            .unwrap_or_else(|| panic!("no CheckResult field holds {type_name}"))
            .number() as u32
    };
    message("Check")
        .field
        .iter()
        .map(|member| {
            let method = methods
                .iter()
                .find(|method| method.input_type() == member.type_name())
                .unwrap_or_else(|| panic!("no RPC takes {}", member.type_name()));
            let fields = message(member.type_name())
                .field
                .iter()
                .map(|field| {
                    let number = field.number() as u32;
                    let pair = |type_name: &str| {
                        let pair = message(type_name);
                        let int32s = pair
                            .field
                            .iter()
                            .filter(|f| f.r#type() == Type::Int32 && f.label() != Label::Repeated);
                        (pair.field.len() == 2 && int32s.count() == 2)
                            .then(|| [0, 1].map(|i| pair.field[i].number() as u32))
                    };
                    match (field.r#type(), field.label() == Label::Repeated) {
                        (Type::Message, false) if field.type_name() == ".arbiter.v1.Board" => {
                            Field::Board(number)
                        }
                        (Type::Message, false) => Field::Message(number),
                        (Type::Int32 | Type::Enum, false) => Field::Int32(number),
                        (Type::Bool, false) => Field::Bool(number),
                        (Type::String, false) => Field::Text(number),
                        (Type::String, true) => Field::Texts(number),
                        (Type::Message, true) => match pair(field.type_name()) {
                            Some([first, second]) => Field::Pairs(number, first, second),
                            None => Field::Messages(number),
                        },
                        other => panic!("{}: {other:?} is not a check's field", field.name()),
                    }
                })
                .collect();
            CheckKind {
                number: member.number() as u32,
                name: member.name().to_owned(),
                path: format!("/arbiter.v1.ArbiterService/{}", method.name()),
                result: result_of(method.output_type()),
                fields,
                samples: samples(member.number() as u32),
            }
        })
        .collect()
}

/// The string and message fields of every request of kind `number` in the registered
/// checks' corpus, each its number and its value's bytes.
fn samples(number: u32) -> Vec<(u32, Vec<u8>)> {
    let mut samples = Vec::new();
    for check in arbiter::check_corpus() {
        let encoded = arbiter::proto::Check { check: Some(check) }.encode_to_vec();
        let mut rest = &encoded[..];
        let (kind, _) = prost::encoding::decode_key(&mut rest).unwrap();
        let len = prost::encoding::decode_varint(&mut rest).unwrap() as usize;
        if kind != number {
            continue;
        }
        let mut request = &rest[..len];
        while !request.is_empty() {
            let (field, wire_type) = prost::encoding::decode_key(&mut request).unwrap();
            if wire_type == prost::encoding::WireType::LengthDelimited {
                let len = prost::encoding::decode_varint(&mut request).unwrap() as usize;
                samples.push((field, request[..len].to_vec()));
                request = &request[len..];
            } else {
                prost::encoding::decode_varint(&mut request).unwrap();
            }
        }
    }
    samples
}

/// A small random number generator (xorshift), for requests made from a seed.
pub struct Rng(u64);

impl Rng {
    /// The generator of `seed`.
    pub fn new(seed: u64) -> Self {
        Self(seed | 1)
    }

    /// The next number.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }

    /// One of `items`.
    pub fn pick<T: Copy>(&mut self, items: &[T]) -> T {
        items[self.below(items.len() as u64) as usize]
    }
}

/// A board of a few rows (now and then up to 100x100) from one game's alphabet (any of
/// the contract's games: a board of another's is refused as such), sometimes spoilt: a
/// foreign character, a short row, an empty row, no rows, or none at all.
pub fn board_rows(rng: &mut Rng) -> Option<Vec<Vec<u8>>> {
    let alphabet = rng.pick(&[&b".BW"[..], b"012"]);
    let side = |rng: &mut Rng| match rng.below(8) {
        0 => 1 + rng.below(100) as usize,
        1 => 1 + rng.below(10) as usize,
        _ => 4 + rng.below(5) as usize,
    };
    let (rows, cols) = (side(rng), side(rng));
    let mut board: Vec<Vec<u8>> = (0..rows)
        .map(|_| (0..cols).map(|_| rng.pick(alphabet)).collect())
        .collect();
    let pick = rng.below(rows as u64) as usize;
    match rng.below(24) {
        0 => board[pick][0] = b'?',
        1 => {
            board[pick].pop();
        }
        2 => board[pick].clear(),
        3 => board.clear(),
        4 => return None,
        5 => board[pick].extend(std::iter::repeat_n(alphabet[0], 101)),
        _ => {}
    }
    Some(board)
}

/// A request of `kind` made from `seed`, as prost encodes it: each field a value that
/// may or may not make sense to its game (coordinates about the board, a colour or
/// not, a player number or not, a run length or not).
pub fn request(kind: &CheckKind, seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let mut out = Vec::new();
    for field in &kind.fields {
        match *field {
            Field::Board(n) => {
                if let Some(rows) = board_rows(&mut rng) {
                    let board = arbiter::proto::Board::from_rows(rows);
                    message::encode(n, &board, &mut out);
                }
            }
            Field::Int32(n) => {
                // Mostly small: a cell near the corner, a player, a short run.
                let value = match rng.below(16) {
                    0 => i32::MIN,
                    1 => i32::MAX,
                    2 => rng.below(101) as i32,
                    3 => -1,
                    4..=6 => rng.below(12) as i32,
                    _ => 1 + rng.below(3) as i32,
                };
                int32::encode(n, &value, &mut out);
            }
            Field::Bool(n) => boolean::encode(n, &(rng.below(2) == 0), &mut out),
            Field::Text(n) => {
                let text = text(kind, n, &mut rng);
                bytes::encode(n, &text, &mut out);
            }
            Field::Texts(n) => {
                for _ in 0..rng.below(5) {
                    let text = text(kind, n, &mut rng);
                    bytes::encode(n, &text, &mut out);
                }
            }
            Field::Message(n) => {
                if rng.below(4) != 0 {
                    bytes::encode(n, &sample(kind, n, &mut rng).unwrap_or_default(), &mut out);
                }
            }
            Field::Messages(n) => {
                for _ in 0..rng.below(4) {
                    bytes::encode(n, &sample(kind, n, &mut rng).unwrap_or_default(), &mut out);
                }
            }
            Field::Pairs(n, first, second) => {
                let coordinate = |rng: &mut Rng| match rng.below(12) {
                    0 => -1,
                    1 => 3,
                    _ => rng.below(3) as i32,
                };
                for _ in 0..rng.below(10) {
                    let mut pair = Vec::new();
                    int32::encode(first, &coordinate(&mut rng), &mut pair);
                    int32::encode(second, &coordinate(&mut rng), &mut pair);
                    bytes::encode(n, &pair, &mut out);
                }
            }
        }
    }
    out
}

/// One of the corpus's values of field `number` of `kind`, if it has any.
fn sample(kind: &CheckKind, number: u32, rng: &mut Rng) -> Option<Vec<u8>> {
    let values: Vec<&Vec<u8>> = kind
        .samples
        .iter()
        .filter(|(field, _)| *field == number)
        .map(|(_, value)| value)
        .collect();
    (!values.is_empty()).then(|| values[rng.below(values.len() as u64) as usize].clone())
}

/// A string for field `number` of `kind`: mostly one of its corpus's (a colour, a
/// position, a move), sometimes one cut short, or a string no game takes.
fn text(kind: &CheckKind, number: u32, rng: &mut Rng) -> Vec<u8> {
    match (rng.below(8), sample(kind, number, rng)) {
        (0, _) | (_, None) => rng
            .pick(&["", "B", "W", "black", "é", "0"])
            .as_bytes()
            .to_vec(),
        (1, Some(mut text)) => {
            // Cut at a character's boundary, so it stays UTF-8.
            let mut at = rng.below(text.len() as u64 + 1) as usize;
            while std::str::from_utf8(&text[..at]).is_err() {
                at -= 1;
            }
            text.truncate(at);
            text
        }
        (_, Some(text)) => text,
    }
}

/// `payload` as field `number` of a message (length-delimited).
pub fn wrapped(number: u32, payload: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    bytes::encode(number, &payload.to_vec(), &mut out);
    out
}

/// Calls the unary RPC at `path` on `channel` with the message `body`: its reply's
/// bytes, or its status.
pub async fn call(channel: &Channel, path: &str, body: Vec<u8>) -> Result<Vec<u8>, Status> {
    let mut grpc = tonic::client::Grpc::new(channel.clone());
    grpc.ready()
        .await
        .map_err(|error| Status::unavailable(error.to_string()))?;
    let path = path.parse().expect("an RPC's path");
    grpc.unary(Request::new(body), path, Raw)
        .await
        .map(tonic::Response::into_inner)
}
