//! A consumer's disruption budget (issue 24 §1): set or replace it, read it with its use now, remove it.

use actix_web::{web, HttpResponse};
use convoy_actors::domain::budgets::BudgetView;
use convoy_actors::domain::Permission::{Operate, Read};
use convoy_actors::domain::{Budget, Command};

use super::error::ApiError;
use super::read::{found, Consistency};
use super::route::Route;
use crate::replica::Replica;

/// A consumer's budget.
const BUDGET: &str = "/v1/consumers/{name}/budget";

/// This module's routes.
pub fn routes() -> Vec<Route> {
    vec![
        Route::put(BUDGET, Operate, "change disruption budgets")
            .summary("Set a consumer's disruption budget")
            .to(put)
            .body::<Budget>()
            .json::<BudgetView>(200, "The budget and its use now.")
            .errors(&[400, 404]),
        Route::get(BUDGET, Read, "read disruption budgets")
            .summary("Show a consumer's disruption budget")
            .to(show)
            .query::<Consistency>()
            .json::<BudgetView>(200, "The budget and its use now.")
            .errors(&[400, 404]),
        Route::delete(BUDGET, Operate, "change disruption budgets")
            .summary("Remove a consumer's disruption budget")
            .to(delete)
            .json::<BudgetView>(200, "The budget as it was.")
            .errors(&[400, 404]),
    ]
}

async fn put(
    replica: web::Data<Replica>,
    name: web::Path<String>,
    body: web::Json<Budget>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    replica
        .propose(Command::SetBudget {
            consumer: name.clone(),
            budget: body.into_inner(),
        })
        .await?;
    let key = name.clone();
    let view = replica.read_written(move |s| s.budget(&key)).await?;
    Ok(HttpResponse::Ok().json(found(view, "budget of consumer", &name)?))
}

async fn show(
    replica: web::Data<Replica>,
    name: web::Path<String>,
    q: web::Query<Consistency>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let view = replica.read(q.consistent, move |s| s.budget(&key)).await?;
    Ok(HttpResponse::Ok().json(found(view, "budget of consumer", &name)?))
}

async fn delete(
    replica: web::Data<Replica>,
    name: web::Path<String>,
) -> Result<HttpResponse, ApiError> {
    let name = name.into_inner();
    let key = name.clone();
    let before = replica.read(true, move |s| s.budget(&key)).await?;
    replica
        .propose(Command::DeleteBudget {
            consumer: name.clone(),
        })
        .await?;
    Ok(HttpResponse::Ok().json(found(before, "budget of consumer", &name)?))
}
