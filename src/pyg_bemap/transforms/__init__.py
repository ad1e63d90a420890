from pyg_bemap.transforms.balance_aware_sampling import BalanceAwareSampling

__all__ = ['BalanceAwareSampling']
