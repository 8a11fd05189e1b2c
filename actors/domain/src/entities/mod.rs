//! What the state is made of besides deployments: resources, consumers and nodes (`model`), subscription
//! policies, the node table, group deployments and the token table, each with its own behaviour; and the
//! rules of a node in several consumers (`membership`).

pub mod brake;
pub mod group_deployment;
pub mod membership;
pub mod model;
pub mod nodes;
pub mod policy;
pub mod tokens;
