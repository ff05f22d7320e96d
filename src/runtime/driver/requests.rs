//! What a person asks of the driver ([`Action`]s from a script line, a key or a panel widget,
//! through one dispatcher): a count, a layout, churn, seek, threads, SIMD, pause, a search. A
//! refused request changes nothing and says why; a request that replaces or cancels a pending
//! switch says what it replaced.

use super::{AVOID_LIMIT_S, AvoidCost, Driver, PRIOR_NS_NEAR, PRIOR_NS_SCATTERED};
use crate::error::SimError;
use crate::layout::LayoutKind;
use crate::neighbours::AvoidForm;
use crate::runtime::action::{Action, Outcome};
use crate::runtime::catalog::AllLayouts;
use crate::runtime::progress::Eta;
use crate::runtime::swarm::{MAX_CHURN, Order};

impl<S: AllLayouts> Driver<S> {
    /// Carries out an action that changes the simulation; the others are
    /// [`Outcome::NotForDriver`]. A refused action changes nothing and says why.
    pub fn apply(&mut self, action: &Action) -> Result<Outcome, SimError> {
        let changed = |was_different: bool| {
            if was_different {
                Outcome::Changed
            } else {
                Outcome::Unchanged
            }
        };
        // A person who picks a count or a layout, or pauses, takes over from a search.
        if matches!(
            action,
            Action::Count(_) | Action::Layout(_) | Action::Pause(true)
        ) {
            self.searches.give_way();
        }
        match *action {
            Action::Layout(kind) => self.set_layout(kind),
            Action::CountUntilOver(line_ms) => {
                let ceiling = self.max_entities(self.requested_layout());
                let mut searches = self.searches.clone();
                let probe = searches.start(line_ms, self.swarm.len(), ceiling)?;
                self.set_count(probe)?;
                self.searches = searches;
                Ok(Outcome::Changed)
            }
            Action::Count(n) => {
                let different = n != self.target;
                self.set_count(n)?;
                Ok(changed(different))
            }
            Action::Churn(n) => {
                let different = n != self.settings.churn;
                self.set_churn(n)?;
                Ok(changed(different))
            }
            Action::Seek(on) => {
                let systems = self.settings.systems.with_seek(on);
                let different = systems != self.settings.systems;
                self.settings.systems = systems;
                Ok(changed(different))
            }
            Action::Avoid(on) => {
                if on {
                    self.swarm.check_neighbours(self.swarm.len())?;
                    self.swarm.check_neighbours(self.target)?;
                    self.check_avoid_cost(self.target.max(self.swarm.len()), None)?;
                }
                let systems = self.settings.systems.with_avoid(on);
                let different = systems != self.settings.systems;
                self.settings.systems = systems;
                Ok(changed(different))
            }
            Action::AvoidForm(form) => {
                if self.settings.systems.avoids() {
                    self.check_avoid_cost(self.target.max(self.swarm.len()), Some(form))?;
                }
                let different = form != self.swarm.avoid_form();
                self.swarm.set_avoid_form(form);
                Ok(changed(different))
            }
            Action::Reach(reach) => {
                let different = reach != self.swarm.reach();
                if self.settings.systems.avoids() {
                    reach.grid_at(self.swarm.len())?;
                }
                self.swarm.set_reach(reach, self.target)?;
                Ok(changed(different))
            }
            Action::SeekKernel(kernel) => {
                let different = kernel != self.swarm.seek_kernel();
                self.swarm.set_seek_kernel(kernel);
                Ok(changed(different))
            }
            Action::Order(order) => self.set_order(order),
            Action::Resort(threshold) => {
                let different = threshold != self.ordering.resort;
                self.ordering.resort = threshold;
                self.ordering.countdown = 0;
                Ok(changed(different))
            }
            Action::ResortCells(every) => {
                let different = every != self.ordering.cell_every;
                self.ordering.cell_every = every;
                self.ordering.since_cell_sort = 0;
                Ok(changed(different))
            }
            Action::Threads(threads) => {
                let different = threads != self.settings.threads;
                self.settings.threads = threads;
                Ok(changed(different))
            }
            Action::Simd(choice) => {
                let different = choice != self.settings.simd;
                self.settings.simd = choice;
                self.swarm.set_simd(choice.tier());
                Ok(changed(different))
            }
            Action::Pause(paused) => {
                let different = paused != self.settings.paused;
                self.settings.paused = paused;
                Ok(changed(different))
            }
            Action::Wait(_)
            | Action::WaitDone
            | Action::Screenshot(_)
            | Action::Say(_)
            | Action::ShowPanel(_)
            | Action::ShowMemory(_)
            | Action::Renderer(_)
            | Action::Resize(_)
            | Action::Export
            | Action::Record(_)
            | Action::Exit => Ok(Outcome::NotForDriver),
        }
    }

    /// Asks for `n` entities: shrinking happens now, growing over the next frames. Refused, with
    /// the population untouched, when `n` is over the maximum or over what memory allows.
    pub(super) fn set_count(&mut self, n: usize) -> Result<(), SimError> {
        // Both while a switch is pending: the current layout holds the population until it lands.
        self.check_layout_max(self.swarm.kind(), n)?;
        self.check_layout_max(self.requested_layout(), n)?;
        self.swarm.check_fits(self.swarm.kind(), n)?;
        if self.settings.systems.avoids() {
            self.swarm.check_neighbours(n)?;
            self.check_avoid_cost(n, None)?;
        }
        let len = self.swarm.len();
        if n < len {
            self.swarm.resize(n)?;
        } else {
            // Room for the whole target now, so the frames that grow toward it never reallocate.
            self.swarm.reserve(n - len)?;
        }
        if n > len && (self.pacing.grow_eta.is_none() || !self.growing()) {
            self.pacing.grow_eta = Some(Eta::new(len));
        }
        self.target = n;
        Ok(())
    }

    /// The freeze guard: the neighbour pass at `count` entities (in `form`, or the form in use)
    /// estimated from the last pass in the same layout, form and order, and never below the
    /// prior; a request past [`AVOID_LIMIT_S`] a frame is refused, saying what helps (unless the
    /// guard is off: [`Self::without_freeze_guard`]).
    pub(super) fn check_avoid_cost(
        &self,
        count: usize,
        form: Option<AvoidForm>,
    ) -> Result<(), SimError> {
        if !self.freeze_guard {
            return Ok(());
        }
        let form = form.unwrap_or(self.swarm.avoid_form());
        let (kind, order) = (self.swarm.kind(), self.swarm.order());
        let measured = self
            .avoid_cost
            .filter(|c| (c.kind, c.form, c.order) == (kind, form, order))
            .map(|c| c.ns_per_entity);
        let prior = if form == AvoidForm::Idiomatic && order != Order::Cell {
            PRIOR_NS_SCATTERED
        } else {
            PRIOR_NS_NEAR
        };
        let seconds = measured.unwrap_or(0.0).max(prior) * count as f64 * 1e-9;
        if seconds > AVOID_LIMIT_S {
            return Err(SimError::NeighboursTooSlow {
                seconds,
                count,
                form: form.name().into(),
                order: order.name().into(),
                limit: AVOID_LIMIT_S,
            });
        }
        Ok(())
    }

    /// Keeps what the last neighbour pass cost per entity, for the freeze guard.
    pub(super) fn note_avoid_cost(&mut self, took: std::time::Duration) {
        let len = self.swarm.len();
        if len > 0 {
            self.avoid_cost = Some(AvoidCost {
                ns_per_entity: took.as_secs_f64() * 1e9 / len as f64,
                kind: self.swarm.kind(),
                form: self.swarm.avoid_form(),
                order: self.swarm.order(),
            });
        }
    }

    fn set_churn(&mut self, per_frame: usize) -> Result<(), SimError> {
        if per_frame > MAX_CHURN {
            return Err(SimError::BadChurn {
                value: per_frame,
                max: MAX_CHURN,
            });
        }
        if per_frame < self.settings.churn {
            // Heavy churn's working memory (and the heap it scattered) is no longer needed.
            self.swarm.release_memory();
        }
        self.settings.churn = per_frame;
        Ok(())
    }

    /// Starts moving every entity into `kind`, carried out over the next frames while the swarm
    /// keeps moving in its current layout; asking for the current layout cancels a pending switch.
    fn set_layout(&mut self, kind: LayoutKind) -> Result<Outcome, SimError> {
        if kind == self.requested_layout() {
            return Ok(Outcome::Unchanged);
        }
        self.check_layout_max(kind, self.target.max(self.swarm.len()))?;
        let current = self.swarm.kind();
        let pending = self.swarm.transition();
        self.swarm.begin_switch(kind)?;
        // A pending reorder gives way to the switch, and starts again once it lands: the switch
        // keeps the logical order, so the new layout is sorted as the old one would have been.
        if let Some(order) = pending.and_then(|p| p.order()) {
            self.ordering.queued = Some(order);
        }
        // Only a switch to another layout is replaced in the user's eyes: a reorder starts again
        // once the switch lands, and a move made for growth was the app's own doing.
        let pending = pending.filter(|p| p.is_switch());
        let outcome = match pending {
            _ if kind == current => Outcome::SwitchCancelled {
                staying: kind,
                cancelled: pending.map(|p| (p.to, p.copied)),
            },
            _ if self.swarm.kind() == kind => Outcome::Switched { to: kind },
            // What a third layout replaces is said, never dropped in silence: its copy is of no
            // use to the new one (another storage), so it is freed in the background.
            Some(p) => Outcome::SwitchReplaced {
                replaced: p.to,
                copied: p.copied,
                to: kind,
                entities: self.swarm.len(),
            },
            None => Outcome::SwitchStarted {
                to: kind,
                entities: self.swarm.len(),
            },
        };
        self.pacing.copy_eta = self.swarm.transition().map(|p| (p.to, Eta::new(0)));
        Ok(outcome)
    }

    /// Starts rebuilding the storage in `order` over the next frames, or queues it until the
    /// start-up fill or a pending switch ends. Refused for a layout that cannot be read out in
    /// a new order (the gpu one), with nothing changed.
    fn set_order(&mut self, order: Order) -> Result<Outcome, SimError> {
        let plain_switch = self.swarm.transition().is_some_and(|p| p.order().is_none());
        if self.loading() || plain_switch {
            let different = self.ordering.queued != Some(order);
            self.ordering.queued = Some(order);
            return Ok(if different {
                Outcome::ReorderQueued { order }
            } else {
                Outcome::Unchanged
            });
        }
        self.ordering.queued = None;
        self.start_order(order)
    }

    /// [`Self::set_order`] with nothing in the way.
    pub(super) fn start_order(&mut self, order: Order) -> Result<Outcome, SimError> {
        let pending = self.swarm.transition().and_then(|p| p.order());
        self.swarm.begin_reorder(order)?;
        self.pacing.copy_eta = self.swarm.transition().map(|p| (p.to, Eta::new(p.copied)));
        Ok(match self.swarm.transition() {
            Some(_) if pending == Some(order) => Outcome::Unchanged,
            Some(p) => Outcome::ReorderStarted {
                order,
                entities: p.len,
                replaced: pending,
            },
            None => Outcome::InOrder {
                order,
                cancelled: pending,
            },
        })
    }

    /// Refuses `n` entities in `kind` over its maximum (a 50M population on the GPU cannot move
    /// into a CPU layout; the count has to come down first).
    fn check_layout_max(&self, kind: LayoutKind, n: usize) -> Result<(), SimError> {
        let max = self.max_entities(kind);
        if n > max {
            return Err(SimError::OverLayoutMax {
                requested: n,
                max,
                layout: kind.name().into(),
            });
        }
        Ok(())
    }
}
