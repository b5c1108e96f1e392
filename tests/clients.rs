//! Every client in examples/ covers the contract. The retry policy of the one-shot RPCs
//! (the `methodConfig` entry of a gRPC service config) is one list, written from the
//! contract here (`retry_policy_json`), which each client reads from its own copy
//! (`POLICY_COPIES`: a Go module, a Java jar, an npm package and a pip package each carry
//! theirs, usable outside this checkout); and each client's source calls every RPC of the
//! contract, named as its language's stubs name it. A copy that drifts, an RPC added to
//! the contract that a policy or a client misses, fails here.
//!
//! To write the copies after the contract grows: `ARBITER_WRITE_POLICY=1 cargo test --test clients`.

use std::path::{Path, PathBuf};

use prost::Message;
use prost_types::FileDescriptorSet;

/// Each client's copy of the retry policy.
const POLICY_COPIES: [&str; 4] = [
    "examples/go/retry_policy.json",
    "examples/java/src/main/resources/arbiter/examples/retry_policy.json",
    "examples/typescript/src/retry_policy.json",
    "examples/python/arbiter_client/retry_policy.json",
];

/// The RPCs of `arbiter.v1.ArbiterService`, in the contract's order, each with whether it
/// streams (either way).
fn rpcs() -> Vec<(String, bool)> {
    let set = FileDescriptorSet::decode(arbiter::proto::FILE_DESCRIPTOR_SET).unwrap();
    let service = set
        .file
        .iter()
        .filter(|file| file.package() == "arbiter.v1")
        .flat_map(|file| &file.service)
        .find(|service| service.name() == "ArbiterService")
        .expect("the contract's service");
    service
        .method
        .iter()
        .map(|method| {
            let streams = method.client_streaming() || method.server_streaming();
            (method.name().to_owned(), streams)
        })
        .collect()
}

/// The retry policy as every client reads it: the standard policy (4 attempts, backoff
/// from 0.1 s to 1 s, on UNAVAILABLE) on every one-shot RPC, which are all pure and so
/// safe to send again; the live games are resumed from their history instead.
fn retry_policy_json() -> String {
    let names: Vec<String> = rpcs()
        .into_iter()
        .filter(|(_, streams)| !streams)
        .map(|(name, _)| {
            format!("    {{\"service\": \"arbiter.v1.ArbiterService\", \"method\": \"{name}\"}}")
        })
        .collect();
    format!(
        "{{\n  \"name\": [\n{}\n  ],\n  \"retryPolicy\": {{\n    \"maxAttempts\": 4,\n    \
         \"initialBackoff\": \"0.1s\",\n    \"maxBackoff\": \"1s\",\n    \
         \"backoffMultiplier\": 2,\n    \"retryableStatusCodes\": [\"UNAVAILABLE\"]\n  }}\n}}\n",
        names.join(",\n")
    )
}

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every client's copy of the retry policy is the one written from the contract.
/// Fails when the contract gains a one-shot RPC and a copy is not written again, or when
/// a copy is edited by hand.
#[test]
fn every_client_retries_every_one_shot_rpc_of_the_contract() {
    let policy = retry_policy_json();
    // It is JSON, and names every one-shot RPC: the list is not empty.
    assert!(policy.contains("\"CheckBatch\""), "{policy}");
    let write = std::env::var_os("ARBITER_WRITE_POLICY").is_some();
    for copy in POLICY_COPIES {
        let path = repo().join(copy);
        if write {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &policy).unwrap();
        }
        let found = std::fs::read_to_string(&path)
            .unwrap_or_else(|error| panic!("{copy}: {error} (ARBITER_WRITE_POLICY=1 writes it)"));
        assert_eq!(
            found, policy,
            "{copy} is not the contract's retry policy (ARBITER_WRITE_POLICY=1 writes it)"
        );
    }
}

/// A client: where its sources are, which files among them are its own (not generated),
/// and how its calls name an RPC.
struct Client {
    name: &'static str,
    sources: &'static [&'static str],
    extension: &'static str,
    call: fn(&str) -> Vec<String>,
}

/// `CheckChessMove` as lowerCamelCase (`checkChessMove`).
fn lower_camel(rpc: &str) -> String {
    let mut chars = rpc.chars();
    chars
        .next()
        .map(|first| first.to_ascii_lowercase().to_string() + chars.as_str())
        .unwrap_or_default()
}

/// `CheckChessMove` as snake_case (`check_chess_move`).
fn snake(rpc: &str) -> String {
    let mut out = String::new();
    for (index, c) in rpc.chars().enumerate() {
        if c.is_ascii_uppercase() && index > 0 {
            out.push('_');
        }
        out.push(c.to_ascii_lowercase());
    }
    out
}

const CLIENTS: [Client; 6] = [
    Client {
        name: "Go",
        sources: &["examples/go"],
        extension: "go",
        call: |rpc| vec![format!(".{rpc}(")],
    },
    Client {
        name: "Java",
        sources: &["examples/java/src/main"],
        extension: "java",
        call: |rpc| vec![format!(".{}(", lower_camel(rpc))],
    },
    Client {
        name: "TypeScript",
        sources: &["examples/typescript/src"],
        extension: "ts",
        call: |rpc| vec![format!(".{rpc}("), format!(".{}(", lower_camel(rpc))],
    },
    Client {
        name: "Python",
        sources: &["examples/python"],
        extension: "py",
        call: |rpc| vec![format!(".{rpc}(")],
    },
    Client {
        name: "Rust",
        sources: &["examples/client.rs"],
        extension: "rs",
        call: |rpc| vec![format!(".{}(", snake(rpc))],
    },
    Client {
        name: "grpcurl",
        sources: &["examples/grpcurl.sh"],
        extension: "sh",
        call: |rpc| vec![format!("ArbiterService/{rpc}")],
    },
];

/// The text of every source file of `client` (generated stubs left out), found under its
/// directories.
fn source_text(client: &Client) -> String {
    fn walk(path: &Path, extension: &str, text: &mut String) {
        if path.is_dir() {
            let name = path
                .file_name()
                .and_then(|name| name.to_str())
                .unwrap_or("");
            // Generated stubs, dependencies and build outputs are not the client's own.
            let skipped = ["generated", "node_modules", "target", "vendor", "arbiterv1"];
            if skipped.contains(&name)
                || ["build", "dist"].contains(&name)
                || name.ends_with(".egg-info")
                || name.starts_with('.')
            {
                return;
            }
            let mut entries: Vec<PathBuf> = std::fs::read_dir(path)
                .unwrap()
                .map(|entry| entry.unwrap().path())
                .collect();
            entries.sort();
            for entry in entries {
                walk(&entry, extension, text);
            }
        } else if path.extension().and_then(|e| e.to_str()) == Some(extension)
            && !path.to_string_lossy().contains("_pb")
        {
            text.push_str(&std::fs::read_to_string(path).unwrap());
        }
    }
    let mut text = String::new();
    for source in client.sources {
        walk(&repo().join(source), client.extension, &mut text);
    }
    assert!(!text.is_empty(), "{}: no source found", client.name);
    text
}

/// Every client calls every RPC of the contract, live games and bulk calls included.
/// Fails when the contract gains an RPC (chess's four did) that a client does not call.
#[test]
fn every_client_calls_every_rpc_of_the_contract() {
    let mut missing = Vec::new();
    for client in &CLIENTS {
        let text = source_text(client);
        for (rpc, _) in rpcs() {
            let names = (client.call)(&rpc);
            if !names.iter().any(|name| text.contains(name.as_str())) {
                missing.push(format!(
                    "{} does not call {rpc} ({})",
                    client.name,
                    names.join(" or ")
                ));
            }
        }
    }
    assert!(missing.is_empty(), "{}", missing.join("\n"));
}
