//! The supervisor's children as actix actors (the server's [`Kin`]): each child an actor over its
//! handler, told and stopped by message.

use std::sync::Arc;

use actix::prelude::*;

use super::children::Kin;
use super::consumer_actor::ConsumerActor;
use super::deployment_actor::DeploymentActor;
use super::group_actor::GroupDeploymentActor;
use super::host::Host;
use super::messages::{Rearm, StepStarted, Stop};
use crate::domain::{DeploymentId, GroupDeploymentId, Timestamp};

/// Children started as actix actors on the current arbiter.
#[derive(Clone, Copy, Debug, Default)]
pub struct ActixKin;

impl Kin for ActixKin {
    type Deployment = Addr<DeploymentActor>;
    type Group = Addr<GroupDeploymentActor>;
    type Consumer = Addr<ConsumerActor>;

    fn start_deployment(
        &mut self,
        id: DeploymentId,
        host: &Arc<dyn Host>,
        deadline: Option<Timestamp>,
    ) -> Self::Deployment {
        DeploymentActor::with_deadline(id, host.clone(), deadline).start()
    }

    fn rearm(&mut self, child: &mut Self::Deployment, deadline: Option<Timestamp>) {
        child.do_send(Rearm(deadline));
    }

    fn stop_deployment(&mut self, child: Self::Deployment) {
        child.do_send(Stop);
    }

    fn start_group(&mut self, id: GroupDeploymentId, host: &Arc<dyn Host>) -> Self::Group {
        GroupDeploymentActor::new(id, host.clone()).start()
    }

    fn step_started(&mut self, child: &mut Self::Group, step: u32) {
        child.do_send(StepStarted(step));
    }

    fn stop_group(&mut self, child: Self::Group) {
        child.do_send(Stop);
    }

    fn start_consumer(&mut self, name: &str, host: &Arc<dyn Host>) -> Self::Consumer {
        ConsumerActor::new(name.to_string(), host.clone()).start()
    }

    fn stop_consumer(&mut self, child: Self::Consumer) {
        child.do_send(Stop);
    }
}

/// The deployment and group-deployment actors, in id order (tests).
#[cfg(test)]
pub fn list(children: &super::children::Children<ActixKin>) -> super::messages::ChildList {
    super::messages::ChildList {
        deployments: children
            .deployments()
            .iter()
            .map(|(id, a)| (*id, a.clone()))
            .collect(),
        groups: children
            .groups()
            .iter()
            .map(|(id, a)| (*id, a.clone()))
            .collect(),
    }
}
