"""The fix plan: one ordered list of steps per report, each checked by pip's or conda's own resolver."""

from conda_torchcheck.plan.build import PlanOptions, build_plan
from conda_torchcheck.plan.model import Plan, Step, Verification

__all__ = ["Plan", "PlanOptions", "Step", "Verification", "build_plan"]
