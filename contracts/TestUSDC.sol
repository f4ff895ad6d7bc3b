// SPDX-License-Identifier: MIT
pragma solidity ^0.8.20;

/// @title TestUSDC — the local dev chain's stablecoin
/// @notice An ERC-20 with 6 decimals and EIP-3009 (transfer/receive with authorization), signed
/// under the EIP-712 domain of Circle's USDC ("USD Coin", version "2"): the x402 `exact` EVM
/// scheme builds exactly that domain from `extra: { name, version }`, so payments signed for this
/// token are the ones a real USDC would accept. Test money only: the deployer mints at will.
/// @dev Revert strings follow FiatToken's wording, which the x402 facilitator maps to its
/// error reasons (expired, not yet valid, used, insufficient balance, invalid signature).
contract TestUSDC {
    string public constant name = "USD Coin";
    string public constant symbol = "USDC";
    string public constant version = "2";
    uint8 public constant decimals = 6;

    bytes32 public constant TRANSFER_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "TransferWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant RECEIVE_WITH_AUTHORIZATION_TYPEHASH = keccak256(
        "ReceiveWithAuthorization(address from,address to,uint256 value,uint256 validAfter,uint256 validBefore,bytes32 nonce)"
    );
    bytes32 public constant CANCEL_AUTHORIZATION_TYPEHASH =
        keccak256("CancelAuthorization(address authorizer,bytes32 nonce)");
    bytes32 private constant EIP712_DOMAIN_TYPEHASH =
        keccak256("EIP712Domain(string name,string version,uint256 chainId,address verifyingContract)");
    /// secp256k1n / 2: a larger `s` is the malleable twin of a valid signature (EIP-2).
    uint256 private constant MAX_S = 0x7FFFFFFFFFFFFFFFFFFFFFFFFFFFFFFF5D576E7357A4501DDFE92F46681B20A0;

    address public immutable minter;
    uint256 private immutable cachedChainId;
    bytes32 private immutable cachedDomainSeparator;

    uint256 public totalSupply;
    mapping(address => uint256) public balanceOf;
    mapping(address => mapping(address => uint256)) public allowance;
    mapping(address => mapping(bytes32 => bool)) private authorizationStates;

    event Transfer(address indexed from, address indexed to, uint256 value);
    event Approval(address indexed owner, address indexed spender, uint256 value);
    event AuthorizationUsed(address indexed authorizer, bytes32 indexed nonce);
    event AuthorizationCanceled(address indexed authorizer, bytes32 indexed nonce);

    constructor() {
        minter = msg.sender;
        cachedChainId = block.chainid;
        cachedDomainSeparator = buildDomainSeparator();
    }

    /// @notice The EIP-712 domain separator; recomputed if the chain id changed (a fork).
    function DOMAIN_SEPARATOR() public view returns (bytes32) {
        return block.chainid == cachedChainId ? cachedDomainSeparator : buildDomainSeparator();
    }

    function mint(address to, uint256 value) external {
        require(msg.sender == minter, "TestUSDC: caller is not the minter");
        require(to != address(0), "ERC20: mint to the zero address");
        totalSupply += value;
        balanceOf[to] += value;
        emit Transfer(address(0), to, value);
    }

    function transfer(address to, uint256 value) external returns (bool) {
        move(msg.sender, to, value);
        return true;
    }

    function approve(address spender, uint256 value) external returns (bool) {
        allowance[msg.sender][spender] = value;
        emit Approval(msg.sender, spender, value);
        return true;
    }

    function transferFrom(address from, address to, uint256 value) external returns (bool) {
        uint256 allowed = allowance[from][msg.sender];
        if (allowed != type(uint256).max) {
            require(allowed >= value, "ERC20: transfer amount exceeds allowance");
            allowance[from][msg.sender] = allowed - value;
        }
        move(from, to, value);
        return true;
    }

    /// @notice Whether `nonce` of `authorizer` has been used or canceled (EIP-3009).
    function authorizationState(address authorizer, bytes32 nonce) external view returns (bool) {
        return authorizationStates[authorizer][nonce];
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        bytes32 digest = authorizationDigest(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce);
        useAuthorization(from, nonce, validAfter, validBefore, digest, v, r, s);
        move(from, to, value);
    }

    function transferWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        (uint8 v, bytes32 r, bytes32 s) = splitSignature(signature);
        bytes32 digest = authorizationDigest(TRANSFER_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce);
        useAuthorization(from, nonce, validAfter, validBefore, digest, v, r, s);
        move(from, to, value);
    }

    /// @notice Like transferWithAuthorization, but only the payee may submit it, so a front-runner
    /// cannot consume the authorization in a different transaction than the payee's.
    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        bytes32 digest = authorizationDigest(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce);
        useAuthorization(from, nonce, validAfter, validBefore, digest, v, r, s);
        move(from, to, value);
    }

    function receiveWithAuthorization(
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce,
        bytes memory signature
    ) external {
        require(to == msg.sender, "FiatTokenV2: caller must be the payee");
        (uint8 v, bytes32 r, bytes32 s) = splitSignature(signature);
        bytes32 digest = authorizationDigest(RECEIVE_WITH_AUTHORIZATION_TYPEHASH, from, to, value, validAfter, validBefore, nonce);
        useAuthorization(from, nonce, validAfter, validBefore, digest, v, r, s);
        move(from, to, value);
    }

    function cancelAuthorization(address authorizer, bytes32 nonce, uint8 v, bytes32 r, bytes32 s) external {
        require(!authorizationStates[authorizer][nonce], "FiatTokenV2: authorization is used or canceled");
        bytes32 digest = typedDataDigest(keccak256(abi.encode(CANCEL_AUTHORIZATION_TYPEHASH, authorizer, nonce)));
        require(recoverSigner(digest, v, r, s) == authorizer, "FiatTokenV2: invalid signature");
        authorizationStates[authorizer][nonce] = true;
        emit AuthorizationCanceled(authorizer, nonce);
    }

    function authorizationDigest(
        bytes32 typeHash,
        address from,
        address to,
        uint256 value,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 nonce
    ) private view returns (bytes32) {
        return typedDataDigest(keccak256(abi.encode(typeHash, from, to, value, validAfter, validBefore, nonce)));
    }

    /// Checks the time window, the nonce and the signer, then burns the nonce — before any
    /// transfer, so a reentrant call cannot use the same authorization twice.
    function useAuthorization(
        address authorizer,
        bytes32 nonce,
        uint256 validAfter,
        uint256 validBefore,
        bytes32 digest,
        uint8 v,
        bytes32 r,
        bytes32 s
    ) private {
        require(block.timestamp > validAfter, "FiatTokenV2: authorization is not yet valid");
        require(block.timestamp < validBefore, "FiatTokenV2: authorization is expired");
        require(!authorizationStates[authorizer][nonce], "FiatTokenV2: authorization is used or canceled");
        require(recoverSigner(digest, v, r, s) == authorizer, "FiatTokenV2: invalid signature");
        authorizationStates[authorizer][nonce] = true;
        emit AuthorizationUsed(authorizer, nonce);
    }

    function typedDataDigest(bytes32 structHash) private view returns (bytes32) {
        return keccak256(abi.encodePacked("\x19\x01", DOMAIN_SEPARATOR(), structHash));
    }

    /// ecrecover accepting only canonical signatures: low `s`, `v` of 27 or 28, and a non-zero
    /// result (ecrecover answers address(0) for garbage, which must never match an authorizer).
    function recoverSigner(bytes32 digest, uint8 v, bytes32 r, bytes32 s) private pure returns (address) {
        require(uint256(s) <= MAX_S, "FiatTokenV2: invalid signature 's' value");
        require(v == 27 || v == 28, "FiatTokenV2: invalid signature 'v' value");
        address signer = ecrecover(digest, v, r, s);
        require(signer != address(0), "FiatTokenV2: invalid signature");
        return signer;
    }

    /// A 65-byte r‖s‖v signature (an EOA's); contract wallets (ERC-1271) are not supported here.
    function splitSignature(bytes memory signature) private pure returns (uint8 v, bytes32 r, bytes32 s) {
        require(signature.length == 65, "FiatTokenV2: invalid signature length");
        assembly {
            r := mload(add(signature, 0x20))
            s := mload(add(signature, 0x40))
            v := byte(0, mload(add(signature, 0x60)))
        }
    }

    function move(address from, address to, uint256 value) private {
        require(to != address(0), "ERC20: transfer to the zero address");
        uint256 balance = balanceOf[from];
        require(balance >= value, "ERC20: transfer amount exceeds balance");
        unchecked {
            balanceOf[from] = balance - value;
        }
        balanceOf[to] += value;
        emit Transfer(from, to, value);
    }

    function buildDomainSeparator() private view returns (bytes32) {
        return keccak256(
            abi.encode(EIP712_DOMAIN_TYPEHASH, keccak256(bytes(name)), keccak256(bytes(version)), block.chainid, address(this))
        );
    }
}
