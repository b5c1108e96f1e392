//! The values of the `rpc` label: every RPC of the services the server serves, read once
//! from their descriptor sets (so that a new RPC is counted under its own name with no
//! list to update), then `other` for any other path, so that callers cannot grow the
//! label set.

use std::sync::LazyLock;

use prost::Message;
use prost_types::FileDescriptorSet;

/// The descriptor sets of the services the server serves: Arbiter's own, health, and
/// both versions of reflection.
const SERVED: [&[u8]; 4] = [
    crate::proto::FILE_DESCRIPTOR_SET,
    tonic_health::pb::FILE_DESCRIPTOR_SET,
    tonic_reflection::pb::v1::FILE_DESCRIPTOR_SET,
    tonic_reflection::pb::v1alpha::FILE_DESCRIPTOR_SET,
];

/// Every RPC of [`SERVED`], as `package.Service/Method` (a request's path without its
/// leading `/`), in the order the descriptor sets list them.
static KNOWN: LazyLock<Box<[String]>> = LazyLock::new(|| rpcs_of(&SERVED));

/// The RPCs `sets` (encoded `FileDescriptorSet`s) declare, without repeats.
fn rpcs_of(sets: &[&[u8]]) -> Box<[String]> {
    let mut rpcs: Vec<String> = Vec::new();
    // A set that did not decode would leave its RPCs counted as `other`; the test
    // `every_rpc_of_the_generated_service_is_counted_under_its_own_name` holds that all of them decode.
    for set in sets
        .iter()
        .filter_map(|set| FileDescriptorSet::decode(*set).ok())
    {
        for file in &set.file {
            for service in &file.service {
                let qualified = match file.package() {
                    "" => service.name().to_owned(),
                    package => format!("{package}.{}", service.name()),
                };
                for method in &service.method {
                    let rpc = format!("{qualified}/{}", method.name());
                    if !rpcs.contains(&rpc) {
                        rpcs.push(rpc);
                    }
                }
            }
        }
    }
    rpcs.into_boxed_slice()
}

/// How many values the `rpc` label can take: the known RPCs, then `other`.
pub(super) fn rpc_labels() -> usize {
    KNOWN.len() + 1
}

/// The index of a request path's RPC among the known ones, or the last index (`other`).
pub(super) fn rpc_index(path: &str) -> usize {
    let name = path.strip_prefix('/').unwrap_or(path);
    KNOWN
        .iter()
        .position(|known| known == name)
        .unwrap_or(KNOWN.len())
}

/// The `rpc` label of the RPC at `index` (see [`rpc_index`]).
pub(super) fn rpc_label(index: usize) -> &'static str {
    KNOWN.get(index).map_or("other", String::as_str)
}

#[cfg(test)]
mod tests {
    use tonic::server::NamedService;

    use super::*;
    use crate::proto::arbiter_service_server::ArbiterServiceServer;
    use crate::service::Arbiter;

    /// Every method of `service` in the encoded descriptor set `set`.
    fn methods(set: &[u8], service: &str) -> Vec<String> {
        let set = FileDescriptorSet::decode(set).unwrap();
        set.file
            .iter()
            .flat_map(|file| file.service.iter().map(move |s| (file.package(), s)))
            .filter(|(package, s)| format!("{package}.{}", s.name()) == service)
            .flat_map(|(_, s)| s.method.iter().map(|m| m.name().to_owned()))
            .collect()
    }

    #[test]
    fn every_rpc_of_the_generated_service_is_counted_under_its_own_name() {
        let service = <ArbiterServiceServer<Arbiter> as NamedService>::NAME;
        let arbiter = methods(crate::proto::FILE_DESCRIPTOR_SET, service);
        assert!(arbiter.iter().any(|m| m == "JudgeTicTacToe"), "{arbiter:?}");
        for method in &arbiter {
            let rpc = format!("{service}/{method}");
            assert_eq!(rpc_label(rpc_index(&format!("/{rpc}"))), rpc);
        }
        let health = "grpc.health.v1.Health";
        for method in ["Check", "Watch"] {
            let rpc = format!("{health}/{method}");
            assert_eq!(rpc_label(rpc_index(&format!("/{rpc}"))), rpc);
        }
        for version in ["v1", "v1alpha"] {
            let rpc = format!("grpc.reflection.{version}.ServerReflection/ServerReflectionInfo");
            assert_eq!(rpc_label(rpc_index(&format!("/{rpc}"))), rpc);
        }
        // Exactly those: every label but `other` is one of the served RPCs.
        let served: usize =
            arbiter.len() + methods(tonic_health::pb::FILE_DESCRIPTOR_SET, health).len() + 2;
        assert_eq!(rpc_labels(), served + 1, "{:?}", *KNOWN);
    }

    #[test]
    fn any_other_path_is_other() {
        for path in [
            "/arbiter.v1.ArbiterService/JudgeTicTacToeX",
            "/arbiter.v1.ArbiterService/",
            "/nope",
            "",
        ] {
            assert_eq!(rpc_index(path), rpc_labels() - 1, "{path}");
            assert_eq!(rpc_label(rpc_index(path)), "other", "{path}");
        }
    }
}
