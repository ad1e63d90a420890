from pyg_bemap.transforms.attach_bemap import AttachBeMap
from pyg_bemap.transforms.balance_aware_sampling import BalanceAwareSampling

__all__ = ['AttachBeMap', 'BalanceAwareSampling']
